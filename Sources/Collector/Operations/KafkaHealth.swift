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
    // Mirrors of the state, written under the lock: a success report that would change nothing (the common case, up
    // to once per message) returns without taking the lock.
    private let isWaiting = Atomic<Bool>(false)
    private let hasFailed = Atomic<Bool>(false)

    init(stallWindow: Duration) {
        self.stallWindow = stallWindow
    }

    /// A batch went onto the producer's queue.
    func enqueued() {
        guard !isWaiting.load(ordering: .relaxed) else { return }
        let now = ContinuousClock.now
        state.withLock { state in
            if state.waitingSince == nil { state.waitingSince = now }
            isWaiting.store(true, ordering: .relaxed)
        }
    }

    /// A delivery report arrived.
    func reported(success: Bool) {
        if success && !isWaiting.load(ordering: .relaxed) && !hasFailed.load(ordering: .relaxed) { return }
        state.withLock { state in
            state.lastReportFailed = !success
            if success { state.waitingSince = nil }
            isWaiting.store(state.waitingSince != nil, ordering: .relaxed)
            hasFailed.store(state.lastReportFailed, ordering: .relaxed)
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
