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

    /// The sequence of the flush that stands for what a spool recovered at start (an earlier run's rollups).
    static let recoveredFlush = -1

    /// A tracker for a publisher that started at `startedAt`: nothing was recorded before it, unless `awaitsRecovered`
    /// (the spool holds an earlier run's records), in which case the watermark claims nothing until
    /// ``recoveredFlush`` is finished.
    init(startedAt: Timestamp, awaitsRecovered: Bool = false) {
        if awaitsRecovered {
            completeUpTo = Timestamp(secondsSinceEpoch: 0)
            outstanding = [Flush(sequence: Self.recoveredFlush, drainedAt: startedAt, pending: 1)]
        } else {
            completeUpTo = startedAt
        }
    }

    /// Whether the watermark claims anything yet (false while a recovered spool waits for its replay).
    var hasClaim: Bool { completeUpTo.secondsSinceEpoch > 0 }

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
