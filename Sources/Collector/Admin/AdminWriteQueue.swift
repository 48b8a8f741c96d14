import Lifecycle
import Synchronization

/// Runs the store writes of the admin routes (deploy markers, manifests) off the HTTP workers, one at a time, in
/// the order they came: the handler enqueues a write and returns, and the write's completion answers the request.
///
/// HTTP workers never block (HTTPServer.swift); a store write may (a PostgreSQL round trip, an SQLite lock held by
/// the sink). The queue's thread (`admin-store-writer`, started through ``Lifecycle/startThread(named:_:)``) runs
/// while writes wait and ends when the queue is empty, so an idle collector holds no thread for it and there is
/// nothing to stop: a write stuck in the store leaves its request to the server's response deadline (503) and holds
/// the thread until the store returns. At most ``capacity`` writes wait; past that a write is refused at once (503),
/// so a stuck store cannot make admin requests pile up in memory.
final class AdminWriteQueue: Sendable {
    /// A write and what runs after it, on the queue's thread.
    typealias Write = @Sendable () -> Void

    /// The most writes waiting at once (admin writes are rare: a few per deploy).
    let capacity: Int
    private let state = Mutex<State>(State())

    private struct State: ~Copyable {
        var writes: [Write] = []
        var head = 0
        var isRunning = false
    }

    init(capacity: Int = 64) {
        self.capacity = capacity
    }

    /// Queues `write`; false (and `write` never runs) when ``capacity`` writes are waiting already.
    func enqueue(_ write: @escaping Write) -> Bool {
        let start = state.withLock { state -> Bool? in
            guard state.writes.count - state.head < capacity else { return nil }
            state.writes.append(write)
            defer { state.isRunning = true }
            return !state.isRunning
        }
        guard let start else { return false }
        if start { startThread(named: "admin-store-writer") { [self] in drain() } }
        return true
    }

    /// Writes waiting to start.
    var waiting: Int { state.withLock { $0.writes.count - $0.head } }

    private func drain() {
        while let write = next() { write() }
    }

    /// The next write, or nil (and the thread is done) when none waits.
    private func next() -> Write? {
        state.withLock { state in
            guard state.head < state.writes.count else {
                state.writes = []
                state.head = 0
                state.isRunning = false
                return nil
            }
            let write = state.writes[state.head]
            state.head += 1
            return write
        }
    }
}
