/// A long-running part of a Flowmeter process: the HTTP server, the producer's poll loop, the spool replay, the
/// sink, the detector loop.
///
/// `run()` starts the part, waits with ``waitForShutdown()`` (or loops while not ``isShuttingDown``, sleeping with
/// ``sleepUnlessShuttingDown(for:)``), then stops the part gracefully before returning. A ``ServiceGroup`` starts
/// services in order and asks them to shut down in reverse order, one at a time: graceful shutdown, so the stop
/// path's own waits (a drain, a flush) are not cut short. The group cancels a service that has not returned within
/// its bound; cancelled, every wait above returns at once, and `run()` must return promptly. The part's threads are
/// ``LoopThread``s or ``onThread(named:_:)`` calls; `run()` itself never blocks its thread.
public protocol Service: Sendable {
    /// A short name for logs, such as `http-server` or `rollup-sink`.
    var name: String { get }

    /// Starts, runs until asked to shut down, stops; throws when the service cannot start or fails for good.
    func run() async throws
}
