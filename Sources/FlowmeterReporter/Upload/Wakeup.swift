import Foundation

/// Lets the upload loop sleep until a deadline or until something new happens, whichever comes first.
///
/// A signal that arrives while the loop is busy is remembered, so the next wait returns at once: no wake-up is
/// ever lost between deciding to sleep and sleeping.
final class Wakeup: Sendable {
    private struct State {
        var isSignalled = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Locked(State())

    /// Wakes the current or the next wait.
    func signal() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.isSignalled = true
            return nil
        }
        waiter?.resume()
    }

    /// Returns when `clock`'s uptime reaches `deadline` (never, when nil), at the next signal, or when the task is
    /// cancelled.
    func wait(until deadline: TimeInterval?, clock: any ReporterClock) async {
        if state.withLock({ state in
            defer { state.isSignalled = false }
            return state.isSignalled
        }) {
            return
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.waitForSignal() }
            if let deadline {
                group.addTask { try? await clock.sleep(untilUptime: deadline) }
            }
            await group.next()
            group.cancelAll()
        }
    }

    private func waitForSignal() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.isSignalled {
                        state.isSignalled = false
                        return true
                    }
                    if Task.isCancelled { return true }
                    state.waiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }
    }
}
