import Synchronization

/// Items that each must be settled by a deadline, watched by one ``LoopThread``: an item still unsettled at its
/// deadline is handed to `expire` on that thread. The collector's unanswered batches and the spool's threshold are
/// two of these.
///
/// Every item waits the same duration, so arrival order is deadline order: the thread only looks at the head of a
/// FIFO, every `tick` (sooner when the head's deadline comes first). Items settled before their deadline leave
/// when they reach the head, so a settled item is let go of within a tick or so; the queue holds at most one
/// deadline's worth of items.
public final class DeadlineWatch<Item: Sendable>: Sendable {
    private struct State: ~Copyable {
        var items: [Item?] = []
        var head = 0
        var isStopped = false
        var loop: LoopThread?
    }

    private let name: String
    private let tick: Duration
    private let state = Mutex(State())
    private let deadline: @Sendable (Item) -> ContinuousClock.Instant
    private let isSettled: @Sendable (Item) -> Bool

    /// A watch whose thread (named `name` once started) looks at the head every `tick` for items not `isSettled`
    /// at their `deadline`.
    public init(
        named name: String, tick: Duration = .milliseconds(20),
        deadline: @escaping @Sendable (Item) -> ContinuousClock.Instant,
        isSettled: @escaping @Sendable (Item) -> Bool
    ) {
        self.name = name
        self.tick = tick
        self.deadline = deadline
        self.isSettled = isSettled
    }

    /// Starts the thread, which calls `expire` for every item still unsettled at its deadline; a second call does
    /// nothing.
    public func start(expire: @escaping @Sendable (Item) -> Void) {
        let loop = state.withLock { state -> Bool in state.loop == nil && !state.isStopped }
        guard loop else { return }
        let started = LoopThread.start(named: name) { [self] loop in run(loop, expire: expire) }
        let keep = state.withLock { state -> Bool in
            guard state.loop == nil, !state.isStopped else { return false }
            state.loop = started
            return true
        }
        if !keep { started.stop() }
    }

    /// Watches `item`; returns false when the watch is stopped, and then the caller settles the item itself.
    public func add(_ item: Item) -> Bool {
        state.withLock { state in
            guard !state.isStopped else { return false }
            state.items.append(item)
            return true
        }
    }

    /// Stops watching: returns every item still in the queue, settled or not (the caller settles the rest now), and
    /// stops the thread, which ends after the expiry in progress. Returns at once; later ``add(_:)`` calls return false.
    public func stop() -> [Item] {
        let (remaining, loop) = state.withLock { state -> ([Item], LoopThread?) in
            state.isStopped = true
            defer {
                state.items = []
                state.head = 0
            }
            return (state.items[state.head...].compactMap { $0 }, state.loop)
        }
        loop?.stop()
        return remaining
    }

    /// Suspends until the thread has ended (after ``stop()``), without blocking the pool.
    public func join() async {
        await state.withLock { $0.loop }?.join()
    }

    private func run(_ loop: LoopThread, expire: @Sendable (Item) -> Void) {
        while true {
            let now = ContinuousClock.now
            let (due, next) = takeDue(at: now)
            for item in due { expire(item) }
            guard loop.wait(until: min(next ?? now + tick, now + tick)) else { return }
        }
    }

    /// The head's unsettled items past their deadline, and the deadline of the first one that is not.
    private func takeDue(at now: ContinuousClock.Instant) -> ([Item], ContinuousClock.Instant?) {
        state.withLock { state in
            var due: [Item] = []
            var next: ContinuousClock.Instant?
            while state.head < state.items.count, let item = state.items[state.head] {
                if !isSettled(item) {
                    let itemDeadline = deadline(item)
                    guard itemDeadline <= now else {
                        next = itemDeadline
                        break
                    }
                    due.append(item)
                }
                // Let go of it now: an item may hold a batch's bytes.
                state.items[state.head] = nil
                state.head += 1
            }
            if state.head > 1_024 && state.head * 2 > state.items.count {
                state.items.removeFirst(state.head)
                state.head = 0
            }
            return (due, next)
        }
    }
}
