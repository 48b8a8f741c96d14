import Dispatch
import Glibc
import Synchronization

/// A named thread that runs a loop until stopped, with the one way Flowmeter's loops wait: ``wait(for:)`` (or
/// ``wait(until:)``, ``waitForWake()``), which ``stop()`` interrupts at once and ``wake()`` ends early.
///
/// Flowmeter's loop threads are these (a poll loop, a reaper, a deadline watch, the spool's writer and replay): the
/// body loops `while loop.wait(...)`, doing a turn of work between waits, and returns when a wait says the loop is
/// stopping. (Two long-lived threads are plain ``startThread(named:_:)``s: the sink's consumer loop, whose
/// `RollupSink.run()` may also run on a caller's thread, and the `signals` reader, which lives with the process.) Stopping never blocks the cooperative pool: ``stop()`` returns at once, ``join()`` suspends until the
/// thread has ended (resumed from that thread), and only ``join(timeout:)`` blocks, for callers already on a
/// thread of their own.
public final class LoopThread: Sendable {
    private struct State {
        var isStopping = false
        var hasExited = false
        var thread: pthread_t?
        var joiners: [CheckedContinuation<Void, Never>] = []
    }

    /// The thread's name (the kernel shows its first 15 bytes).
    public let name: String
    private let state = Mutex(State())
    private let wakeup = Wakeup()
    private let exitSignal = DispatchSemaphore(value: 0)

    /// A loop named `name`, not started yet (for an owner that starts it once it is made itself).
    public init(named name: String) {
        self.name = name
    }

    /// Starts the thread, which runs `body` once, passing it this loop to wait on; the loop ends when `body`
    /// returns. Call once.
    public func start(_ body: @escaping @Sendable (LoopThread) -> Void) {
        startThread(named: name) { [self] in
            state.withLock { $0.thread = pthread_self() }
            body(self)
            exited()
        }
    }

    /// Starts a thread named `name` that runs `body` once, passing it the loop to wait on; the loop ends when `body`
    /// returns.
    @discardableResult
    public static func start(named name: String, _ body: @escaping @Sendable (LoopThread) -> Void) -> LoopThread {
        let loop = LoopThread(named: name)
        loop.start(body)
        return loop
    }

    /// Starts a thread named `name` that runs `turn` now and then every `interval` until stopped.
    @discardableResult
    public static func every(
        _ interval: Duration, named name: String, _ turn: @escaping @Sendable () -> Void
    ) -> LoopThread {
        start(named: name) { loop in
            repeat { turn() } while loop.wait(for: interval)
        }
    }

    /// Whether ``stop()`` was called.
    public var isStopping: Bool {
        state.withLock { $0.isStopping }
    }

    /// Waits `duration`, less when woken or stopped; returns false once the loop is stopping. For the loop's own
    /// thread. A wait may end early after a ``wake()``; a loop re-checks its work either way.
    @discardableResult
    public func wait(for duration: Duration) -> Bool {
        if isStopping { return false }
        wakeup.wait(for: duration)
        return !isStopping
    }

    /// Waits until `instant`, less when woken or stopped; returns false once the loop is stopping.
    @discardableResult
    public func wait(until instant: ContinuousClock.Instant) -> Bool {
        wait(for: instant - .now)
    }

    /// Waits until woken or stopped; returns false once the loop is stopping.
    @discardableResult
    public func waitForWake() -> Bool {
        wait(for: .seconds(Int64.max))
    }

    /// Ends the loop's current or next wait early (work arrived); from any thread, cheap when repeated.
    public func wake() {
        wakeup.wake()
    }

    /// Asks the loop to stop: its current wait ends and every later one returns false at once. Returns at once;
    /// idempotent.
    public func stop() {
        let signal = state.withLock { state -> Bool in
            defer { state.isStopping = true }
            return !state.isStopping
        }
        if signal { wakeup.wake() }
    }

    /// Suspends until the thread has ended, without blocking a thread of the pool.
    public func join() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let hasExited = state.withLock { state -> Bool in
                if !state.hasExited { state.joiners.append(continuation) }
                return state.hasExited
            }
            if hasExited { continuation.resume() }
        }
    }

    /// ``stop()``, then ``join()``.
    public func stopAndJoin() async {
        stop()
        await join()
    }

    /// Blocks the calling thread until the loop's thread has ended or `timeout` passes; returns whether it ended.
    /// For callers on a thread of their own, never on the cooperative pool. Called on the loop's own thread (a
    /// callback it runs dropped the last reference to its owner), returns false at once: a thread cannot wait for
    /// itself.
    @discardableResult
    public func join(timeout: Duration) -> Bool {
        let (hasExited, thread) = state.withLock { ($0.hasExited, $0.thread) }
        let isOwnThread = thread.map { pthread_equal($0, pthread_self()) != 0 } == true
        if hasExited { return true }
        if isOwnThread { return false }
        guard exitSignal.wait(timeout: Wakeup.deadline(after: timeout)) == .success else { return false }
        exitSignal.signal()  // for the next joiner
        return true
    }

    private func exited() {
        let joiners = state.withLock { state in
            state.hasExited = true
            defer { state.joiners = [] }
            return state.joiners
        }
        exitSignal.signal()
        for joiner in joiners { joiner.resume() }
    }
}

/// The one way a Flowmeter thread waits for something to happen, with a bound: ``wait(for:)`` returns when
/// ``wake()`` is called (before or during the wait) or the time passes. A ``LoopThread`` waits on one; a thread that
/// waits for another's work (the spool's replay for new records) waits on one the other wakes.
public final class Wakeup: Sendable {
    private let pending = Atomic<Bool>(false)
    private let signal = DispatchSemaphore(value: 0)

    /// A wakeup nobody has woken yet.
    public init() {}

    /// Waits until woken or `duration` passes. A wake that came while nobody waited ends the next wait at once; a
    /// wait may also end early after a wake raced with its timeout, so a waiter re-checks its work either way.
    public func wait(for duration: Duration) {
        _ = signal.wait(timeout: Self.deadline(after: duration))
        pending.store(false, ordering: .releasing)
    }

    /// Ends the current or next wait; from any thread, cheap when repeated before the waiter wakes.
    public func wake() {
        if !pending.exchange(true, ordering: .acquiringAndReleasing) { signal.signal() }
    }

    /// The dispatch deadline `duration` from now (distant future for a huge one).
    static func deadline(after duration: Duration) -> DispatchTime {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return .now() }
        guard seconds < 1_000_000_000 else { return .distantFuture }
        return .now() + .nanoseconds(Int(seconds * 1_000_000_000 + attoseconds / 1_000_000_000))
    }
}
