/// Suspends until the current task is cancelled; returns at once when it already is.
///
/// A service waits with ``waitForShutdown()`` instead, which also hears its group's graceful shutdown.
public func waitUntilCancelled() async {
    let waiter = ShutdownWaiter()
    await withTaskCancellationHandler {
        await waiter.wait()
    } onCancel: {
        waiter.fire()
    }
}
