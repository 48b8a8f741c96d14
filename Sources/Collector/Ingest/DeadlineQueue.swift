import Foundation
import Synchronization

/// Answers batches whose Kafka delivery takes longer than the response deadline, from one named thread.
///
/// Every batch gets the same deadline duration, so arrival order is deadline order: the thread only looks at the
/// head of a FIFO, every `tick`. Answered batches leave when they reach the head; the queue holds at most the
/// batches of one deadline's worth of traffic.
final class DeadlineQueue: Sendable {
    private struct State: ~Copyable {
        var items: [PendingBatch] = []
        var head = 0
        var isStopped = false
    }

    private let state = Mutex(State())
    private let tick: Duration
    private let expire: @Sendable (PendingBatch) -> Void

    /// A queue that calls `expire` (on its thread) for every batch still unanswered at its deadline.
    init(tick: Duration = .milliseconds(20), expire: @escaping @Sendable (PendingBatch) -> Void) {
        self.tick = tick
        self.expire = expire
    }

    /// Starts the thread.
    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "collector-deadlines"
        thread.start()
    }

    /// Stops the thread after answering every batch still waiting with `expire`.
    func stop() {
        let remaining = state.withLock { state in
            state.isStopped = true
            defer {
                state.items = []
                state.head = 0
            }
            return Array(state.items[state.head...])
        }
        for batch in remaining where !batch.responder.isAnswered {
            expire(batch)
        }
    }

    /// Watches `batch` until it is answered or its deadline passes.
    func add(_ batch: PendingBatch) {
        let isStopped = state.withLock { state in
            if !state.isStopped { state.items.append(batch) }
            return state.isStopped
        }
        if isStopped { expire(batch) }
    }

    private func run() {
        let seconds = Double(tick.components.seconds) + Double(tick.components.attoseconds) * 1e-18
        while true {
            let now = ContinuousClock.now
            let (due, isStopped) = state.withLock { state -> ([PendingBatch], Bool) in
                var due: [PendingBatch] = []
                while state.head < state.items.count {
                    let batch = state.items[state.head]
                    if !batch.responder.isAnswered {
                        guard batch.deadline <= now else { break }
                        due.append(batch)
                    }
                    state.head += 1
                }
                if state.head > 4_096 && state.head * 2 > state.items.count {
                    state.items.removeFirst(state.head)
                    state.head = 0
                }
                return (due, state.isStopped)
            }
            for batch in due {
                expire(batch)
            }
            if isStopped { return }
            Thread.sleep(forTimeInterval: seconds)
        }
    }
}
