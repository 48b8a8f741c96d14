/// Events dropped per reason, not yet reported to the collector.
struct DiscardCounts: Sendable, Equatable, Codable {
    private(set) var counts: [String: Int] = [:]

    init() {}

    var isEmpty: Bool { counts.isEmpty }

    /// The non-zero counts in reason order (the order of ``DiscardReason/allCases``).
    var entries: [(reason: DiscardReason, count: Int)] {
        DiscardReason.allCases.compactMap { reason in counts[reason.rawValue].map { (reason, $0) } }
    }

    /// The count for `reason`.
    subscript(reason: DiscardReason) -> Int { counts[reason.rawValue] ?? 0 }

    mutating func add(_ count: Int, for reason: DiscardReason) {
        guard count > 0 else { return }
        counts[reason.rawValue] = min(Int(Int32.max), (counts[reason.rawValue] ?? 0) + count)
    }

    mutating func add(_ other: DiscardCounts) {
        for (reason, count) in other.entries { add(count, for: reason) }
    }

    /// Returns the counts and leaves this empty.
    mutating func take() -> DiscardCounts {
        defer { counts = [:] }
        return self
    }
}
