/// A batch file read back: the client, the events with their summed counts, the decodes and the client report.
struct StoredBatch: Sendable, Equatable {
    /// One event: its JSON without `count`, and the count.
    struct Event: Sendable, Equatable {
        var json: [UInt8]
        var count: Int
    }

    /// The client object as JSON.
    var client: [UInt8]
    var events: [Event]
    var decodes: Int
    var report: DiscardCounts
    /// Whether an attempt to send it has started (an `A` line): its body must not change any more.
    var isAttempted = false
    /// Occurrences on lines that could not be read back (damaged on disk), left out of `events`.
    var corrupt = 0

    /// The sum of the events' counts.
    var occurrences: Int { events.reduce(0) { $0 + $1.count } }

    /// The batch in two halves by event order; decodes and the report go with the first. Needs two events or more.
    func halves() -> (StoredBatch, StoredBatch) {
        precondition(events.count >= 2, "a batch of one event cannot be split")
        let middle = events.count / 2
        // The halves are new batches under new ids, never attempted.
        let first = StoredBatch(client: client, events: Array(events[..<middle]), decodes: decodes, report: report)
        let second = StoredBatch(client: client, events: Array(events[middle...]), decodes: 0, report: DiscardCounts())
        return (first, second)
    }
}
