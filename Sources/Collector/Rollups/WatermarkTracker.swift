import FlowmeterModels

/// Which of the rollup publisher's flushes are wholly delivered, and so how far its watermark may claim.
///
/// Every flush is registered with the instant just before its drain and the number of messages it sends; each
/// message is finished once its delivery report says persisted, the store applied it, or it was dropped for good
/// (retries keep it pending). The watermark moves to a flush's drain instant once it and every flush before it are
/// finished: every batch answered 202 before that instant was recorded before the drain, so its rollups are in
/// Kafka (or the store) ahead of any watermark sent afterwards.
struct WatermarkTracker: Sendable {
    private struct Flush {
        var sequence: Int
        var drainedAt: Timestamp
        var pending: Int
    }

    // Oldest first; each entry is one flush still waiting for some of its messages.
    private var outstanding: [Flush] = []
    private var nextSequence = 0
    /// Every batch answered before this instant has its rollups delivered.
    private(set) var completeUpTo: Timestamp

    /// A tracker for a publisher that started at `startedAt` (nothing was recorded before it).
    init(startedAt: Timestamp) {
        completeUpTo = startedAt
    }

    /// Whether some flush still waits for a message.
    var hasPending: Bool { !outstanding.isEmpty }

    /// Registers a flush drained just after `drainedAt` that sends `count` messages; returns its sequence, which
    /// its messages carry to ``finish(_:)``.
    mutating func flushed(count: Int, drainedAt: Timestamp) -> Int {
        let sequence = nextSequence
        nextSequence += 1
        outstanding.append(Flush(sequence: sequence, drainedAt: drainedAt, pending: count))
        advance()
        return sequence
    }

    /// One message of flush `sequence` is done: persisted, applied, or dropped for good.
    mutating func finish(_ sequence: Int) {
        guard let index = outstanding.firstIndex(where: { $0.sequence == sequence }) else { return }
        outstanding[index].pending -= 1
        advance()
    }

    private mutating func advance() {
        while let first = outstanding.first, first.pending <= 0 {
            completeUpTo = max(completeUpTo, first.drainedAt)
            outstanding.removeFirst()
        }
    }
}
