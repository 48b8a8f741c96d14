/// What an app's SDK dropped before sending, per reason: the optional batch-level `clientReport` (docs/api.md#ingest).
///
/// Both decode paths read it leniently and identically, and never reject a batch for it: a `clientReport` that is
/// not an object, or whose `discarded` is not an array, is ignored; an entry that is not an object, whose `reason`
/// is not an identifier (``IdentifierRule``; cut to 256 scalars), or whose `events` is not a non-negative `Int`, is
/// skipped. Only the first ``maxEntries`` entries are looked at. With no entry left, the batch has no report.
public struct ClientReport: Hashable, Sendable, Codable {
    /// One reason and how many events it cost.
    public struct Discarded: Hashable, Sendable, Codable {
        /// Why, in docs/api.md#client-sdk's words (`queue_overflow`, `expired`, …) or a newer SDK's.
        public var reason: String
        /// How many events (occurrences) were dropped for it.
        public var events: Int

        /// Creates an entry.
        public init(reason: String, events: Int) {
            self.reason = reason
            self.events = events
        }
    }

    /// The entries, in the order sent.
    public var discarded: [Discarded]

    /// Entries past this many are not looked at.
    public static let maxEntries = 32

    /// Creates a report.
    public init(discarded: [Discarded]) {
        self.discarded = discarded
    }

    /// The total of `events` over the entries, saturating instead of overflowing.
    public var totalEvents: Int {
        discarded.reduce(0) { total, entry in
            let (sum, overflow) = total.addingReportingOverflow(entry.events)
            return overflow ? Int.max : sum
        }
    }
}

extension ClientReport {
    enum CodingKeys: String, CodingKey {
        case discarded
    }

    /// The Codable path's lenient read of `clientReport` at `key`: nil where the fast path gives nil.
    static func lenient<Key: CodingKey>(in container: KeyedDecodingContainer<Key>, forKey key: Key) -> ClientReport? {
        guard let report = try? container.nestedContainer(keyedBy: CodingKeys.self, forKey: key),
            var list = try? report.nestedUnkeyedContainer(forKey: .discarded)
        else { return nil }
        var entries: [Discarded] = []
        var looked = 0
        while !list.isAtEnd && looked < maxEntries {
            looked += 1
            guard let element = try? list.superDecoder() else { break }
            guard let fields = try? element.container(keyedBy: Discarded.CodingKeys.self),
                let reason = try? fields.requiredString(.reason), IdentifierRule.violation(in: reason) == nil,
                let events = try? fields.int(.events), events >= 0
            else { continue }
            entries.append(Discarded(reason: reason, events: events))
        }
        return entries.isEmpty ? nil : ClientReport(discarded: entries)
    }
}

extension ClientReport.Discarded {
    enum CodingKeys: String, CodingKey {
        case reason, events
    }
}
