import Synchronization

// Graceful shutdown, apart from cancellation (as swift-service-lifecycle keeps them apart): a ``ServiceGroup`` asks
// each service to shut down through a signal of its own, so the service's stop path runs in a task that is not
// cancelled, and its awaits (a drain's sleep, a flush) wait as long as they say. Cancellation stays the hurry: the
// group cancels a service only when it has not returned within its bound, and then every wait below returns at once.

/// Suspends until the ``ServiceGroup`` running this task asks it to shut down gracefully, or the task is
/// cancelled; returns at once when either already happened. A service's `run()` calls it between starting and
/// stopping its part. Outside a group only cancellation ends it.
public func waitForShutdown() async {
    let signal = ShutdownSignal.current
    let waiter = ShutdownWaiter()
    let token = signal?.add(waiter)
    await withTaskCancellationHandler {
        await waiter.wait()
    } onCancel: {
        waiter.fire()
    }
    if let token { signal?.remove(token) }
}

/// Whether this task was asked to shut down (by its group, or by cancellation). A loop checks it between turns.
public var isShuttingDown: Bool {
    Task.isCancelled || ShutdownSignal.current?.isRequested == true
}

/// Sleeps `duration`, less when shutdown is requested (or the task is cancelled) first; returns whether it slept
/// the whole duration. The way an async loop of a service waits between turns.
public func sleepUnlessShuttingDown(for duration: Duration) async -> Bool {
    await withTaskGroup(of: Bool.self) { group in
        group.addTask {
            do {
                try await Task.sleep(for: duration)
                return !isShuttingDown
            } catch {
                return false
            }
        }
        group.addTask {
            await waitForShutdown()
            return false
        }
        let slept = await group.next() ?? false
        group.cancelAll()
        return slept
    }
}

/// The graceful-shutdown request a ``ServiceGroup`` gives each service's task (a task-local value its child tasks
/// inherit): requested once, heard by every waiter.
final class ShutdownSignal: Sendable {
    @TaskLocal static var current: ShutdownSignal?

    private struct State {
        var isRequested = false
        var waiters: [UInt64: ShutdownWaiter] = [:]
        var next: UInt64 = 0
    }

    private let state = Mutex(State())

    var isRequested: Bool {
        state.withLock { $0.isRequested }
    }

    /// Requests the shutdown: every waiter, present and future, returns.
    func request() {
        let waiters = state.withLock { state -> [ShutdownWaiter] in
            state.isRequested = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.fire() }
    }

    func add(_ waiter: ShutdownWaiter) -> UInt64? {
        let token = state.withLock { state -> UInt64? in
            guard !state.isRequested else { return nil }
            state.next += 1
            state.waiters[state.next] = waiter
            return state.next
        }
        if token == nil { waiter.fire() }
        return token
    }

    func remove(_ token: UInt64) {
        _ = state.withLock { $0.waiters.removeValue(forKey: token) }
    }
}

/// One parked continuation and whether it was fired first; resumed exactly once.
final class ShutdownWaiter: Sendable {
    private enum State {
        case waiting
        case parked(CheckedContinuation<Void, Never>)
        case fired
    }

    private let state = Mutex(State.waiting)

    func wait() async {
        await withCheckedContinuation { continuation in
            let resumeNow = state.withLock { state -> Bool in
                if case .fired = state { return true }
                state = .parked(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    func fire() {
        let parked = state.withLock { state -> CheckedContinuation<Void, Never>? in
            defer { state = .fired }
            if case .parked(let continuation) = state { return continuation }
            return nil
        }
        parked?.resume()
    }
}
