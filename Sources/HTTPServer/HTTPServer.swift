import FlowmeterModels
import FlowmeterWire
import Glibc
import Lifecycle
import Synchronization

/// An HTTP/1.1 server over libmicrohttpd with body limits, request and response deadlines, and suspendable
/// handlers.
///
/// Lifecycle: `start()`, then either `run()` until asked to shut down, or `stopAccepting()`, `drain(timeout:)` and
/// `stop()` (`stopOnThread()` from async code). Every stopping call is idempotent. The server answers every
/// suspended request before libmicrohttpd stops, so no suspended connection outlives it.
///
/// Threads: libmicrohttpd's workers (`threadPoolSize`, named by libmicrohttpd) run the handlers, which must never
/// block; `http-reaper` (a ``LoopThread``) enforces the deadlines libmicrohttpd cannot. Both end in `stop()`.
public final class HTTPServer: Sendable {
    private enum Phase {
        case idle
        case running
        case quiesced
        case stopped
    }

    private struct Lifecycle {
        var phase = Phase.idle
        var daemon: MHDDaemon?
        var reaper: DeadlineReaper?
        var listenDescriptor: Int32 = -1
        var port: UInt16 = 0
        var stopWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let core: ServerCore
    private let lifecycle = Mutex(Lifecycle())

    /// Makes a server that hands every request to `handler`; nothing listens until `start()`.
    public init(configuration: HTTPServerConfiguration = HTTPServerConfiguration(), handler: @escaping HTTPHandler) {
        self.core = ServerCore(configuration: configuration, handler: handler)
    }

    /// Makes a server that routes requests through `router`.
    public convenience init(configuration: HTTPServerConfiguration = HTTPServerConfiguration(), router: HTTPRouter) {
        self.init(configuration: configuration, handler: router.handler)
    }

    deinit {
        stop()
    }

    /// The configuration the server was made with.
    public var configuration: HTTPServerConfiguration { core.configuration }

    /// The bound TCP port once started (the real one when the configuration asked for port 0); 0 before.
    public var port: UInt16 {
        lifecycle.withLock { $0.port }
    }

    /// A snapshot of the server's gauges and counters; cheap, callable from any thread.
    public var statistics: HTTPServerStatistics {
        core.statistics
    }

    /// Binds the socket and starts the worker threads; returns once the server accepts connections.
    ///
    /// Throws `HTTPServerError` with code `.addressInUse` when the port is taken, `.invalidState` when the server
    /// was already started.
    public func start() throws(HTTPServerError) {
        try lifecycle.withLock { (lifecycle: inout Lifecycle) throws(HTTPServerError) in
            guard lifecycle.phase == .idle else {
                throw HTTPServerError(.invalidState, "the server was already started")
            }
            let configuration = core.configuration
            let listenSocket = try ListenSocket.bind(
                host: configuration.host,
                port: configuration.port,
                backlog: configuration.listenBacklog
            )
            do throws(HTTPServerError) {
                lifecycle.daemon = try MHDDaemon.start(core: core, listenSocket: listenSocket)
            } catch {
                close(listenSocket.descriptor)
                throw error
            }
            lifecycle.reaper = DeadlineReaper(core: core)
            lifecycle.listenDescriptor = listenSocket.descriptor
            lifecycle.port = listenSocket.port
            lifecycle.phase = .running
        }
    }

    /// Stops accepting connections and closes the listening socket; requests in progress continue.
    ///
    /// From now on every response carries `Connection: close`, so kept-alive clients move elsewhere.
    public func stopAccepting() {
        core.isDraining.store(true, ordering: .sequentiallyConsistent)
        lifecycle.withLock { lifecycle in
            guard lifecycle.phase == .running, let daemon = lifecycle.daemon else { return }
            let descriptor = daemon.quiesce()
            close(descriptor >= 0 ? descriptor : lifecycle.listenDescriptor)
            lifecycle.listenDescriptor = -1
            lifecycle.phase = .quiesced
        }
    }

    /// Waits until no request is in progress, or `timeout` passes, or the task is cancelled; returns whether the
    /// server drained.
    ///
    /// Suspended requests end when their handler answers or their response deadline passes.
    public func drain(timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while core.inFlightRequests.load(ordering: .relaxed) > 0 {
            guard ContinuousClock.now < deadline else { return false }
            do {
                try await Task.sleep(for: .milliseconds(5))
            } catch {
                return core.inFlightRequests.load(ordering: .relaxed) == 0
            }
        }
        return true
    }

    /// ``stop()`` on a thread of its own (`http-stop`): suspends the caller, never blocks a thread of the pool.
    public func stopOnThread() async {
        await onThread(named: "http-stop") { [self] in stop() }
    }

    /// Stops the server: answers suspended requests with the fallback, then closes every connection.
    ///
    /// Blocks the calling thread for as long as libmicrohttpd takes to deliver those answers and join its
    /// threads (normally milliseconds, at most about 5 s); from async code, ``stopOnThread()``. Idempotent.
    public func stop() {
        stopAccepting()
        let taken = lifecycle.withLock { lifecycle -> (MHDDaemon, DeadlineReaper?)? in
            guard lifecycle.phase == .running || lifecycle.phase == .quiesced, let daemon = lifecycle.daemon else {
                return nil
            }
            lifecycle.phase = .stopped
            lifecycle.daemon = nil
            defer { lifecycle.reaper = nil }
            return (daemon, lifecycle.reaper)
        }
        guard let (daemon, reaper) = taken else { return }
        core.isStopping.store(true, ordering: .sequentiallyConsistent)
        // libmicrohttpd must not stop with suspended connections: answer them and wait until it has resumed them.
        let giveUp = MonotonicClock.nanoseconds() + 5_000_000_000
        let pause = Wakeup()
        repeat {
            core.answerAllSuspended()
            if core.suspendedRequests.load(ordering: .sequentiallyConsistent) == 0 { break }
            pause.wait(for: .milliseconds(1))
        } while MonotonicClock.nanoseconds() < giveUp
        reaper?.stop()
        daemon.stop()
        let waiters = lifecycle.withLock { lifecycle in
            defer { lifecycle.stopWaiters = [] }
            return lifecycle.stopWaiters
        }
        for waiter in waiters {
            waiter.resume()
        }
    }

    /// Stops accepting, waits up to `drainTimeout` for requests in progress, then stops (off the pool).
    public func shutdown(drainTimeout: Duration) async {
        stopAccepting()
        _ = await drain(timeout: drainTimeout)
        await stopOnThread()
    }

    /// Starts the server if needed and returns once it has stopped: by `stop()`, or, asked to shut down
    /// (``waitForShutdown()``: its group's graceful shutdown, or cancellation), after draining for up to
    /// `responseDeadline`.
    public func run() async throws {
        if lifecycle.withLock({ $0.phase == .idle }) {
            try start()
        }
        let drainTimeout = core.configuration.responseDeadline
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await self.waitUntilStopped()
                return false
            }
            group.addTask {
                await waitForShutdown()
                return true
            }
            let shutdownRequested = await group.next() ?? false
            // Ends the shutdown wait when the server stopped first; the stop wait ends with the shutdown below.
            group.cancelAll()
            if shutdownRequested { await shutdown(drainTimeout: drainTimeout) }
        }
    }

    /// Suspends until the server has stopped.
    private func waitUntilStopped() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let isStopped = lifecycle.withLock { lifecycle in
                guard lifecycle.phase != .stopped else { return true }
                lifecycle.stopWaiters.append(continuation)
                return false
            }
            if isStopped {
                continuation.resume()
            }
        }
    }
}
