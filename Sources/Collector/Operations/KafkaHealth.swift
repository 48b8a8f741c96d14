import Synchronization

/// Whether Kafka is answering, judged from the delivery reports the collector already receives.
///
/// Not ready while the newest report was a failure, or while messages have waited longer than `stallWindow`
/// without any report saying persisted. An idle collector cannot tell (it sends nothing), so it stays ready until
/// traffic says otherwise. Safe from any thread.
final class KafkaHealth: Sendable {
    private struct State {
        var lastReportFailed = false
        var waitingSince: ContinuousClock.Instant?
    }

    private let stallWindow: Duration
    private let state = Mutex(State())

    init(stallWindow: Duration) {
        self.stallWindow = stallWindow
    }

    /// A batch went onto the producer's queue.
    func enqueued() {
        let now = ContinuousClock.now
        state.withLock { state in
            if state.waitingSince == nil { state.waitingSince = now }
        }
    }

    /// A delivery report arrived.
    func reported(success: Bool) {
        state.withLock { state in
            state.lastReportFailed = !success
            if success { state.waitingSince = nil }
        }
    }

    /// Whether Kafka looks reachable now.
    var isUp: Bool {
        let now = ContinuousClock.now
        return state.withLock { state in
            if state.lastReportFailed { return false }
            guard let since = state.waitingSince else { return true }
            return now - since < stallWindow
        }
    }
}
