import Synchronization

/// Suspends until the current task is cancelled; returns at once when it already is.
///
/// A service's `run()` calls it between starting and stopping its part.
public func waitUntilCancelled() async {
    let waiter = CancellationWaiter()
    await withTaskCancellationHandler {
        await withCheckedContinuation { continuation in
            waiter.park(continuation)
        }
    } onCancel: {
        waiter.cancel()
    }
}

/// One parked continuation and whether cancellation came first; resumed exactly once.
private final class CancellationWaiter: Sendable {
    private enum State {
        case waiting
        case parked(CheckedContinuation<Void, Never>)
        case cancelled
    }

    private let state = Mutex(State.waiting)

    func park(_ continuation: CheckedContinuation<Void, Never>) {
        let resumeNow = state.withLock { state -> Bool in
            if case .cancelled = state { return true }
            state = .parked(continuation)
            return false
        }
        if resumeNow { continuation.resume() }
    }

    func cancel() {
        let parked = state.withLock { state -> CheckedContinuation<Void, Never>? in
            defer { state = .cancelled }
            if case .parked(let continuation) = state { return continuation }
            return nil
        }
        parked?.resume()
    }
}
