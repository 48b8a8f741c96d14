import Dispatch
import Glibc
public import Logging
import Synchronization

/// Runs a process's services as one: starts them in order, turns SIGTERM and SIGINT into a graceful shutdown of
/// each in reverse order, each within its own bound, and logs what it waited for.
///
/// The group ends when a termination signal arrives, when ``triggerShutdown()`` is called, or when any service's
/// `run()` returns or throws on its own; in every case every service still running is asked to shut down, last
/// started first, and waited for. The request is graceful shutdown, not cancellation (``waitForShutdown()``): the
/// service's stop path runs in a task that is not cancelled, so its waits wait. A service that has not returned
/// within its bound is cancelled and left behind (logged), and the next one is stopped.
/// `run()` rethrows the first error a service threw. A second termination signal during shutdown exits the process
/// at once with status 130, as an impatient operator expects.
///
/// Modelled on swift-service-lifecycle's `ServiceGroup`.
public final class ServiceGroup: Sendable {
    /// One service and how long the group waits for it to stop once cancelled.
    public struct Entry: Sendable {
        /// The service.
        public var service: any Service
        /// The bound on its stop; 10 s by default.
        public var shutdownTimeout: Duration

        /// An entry.
        public init(_ service: any Service, shutdownTimeout: Duration = .seconds(10)) {
            self.service = service
            self.shutdownTimeout = shutdownTimeout
        }
    }

    /// The services, in start order.
    public let entries: [Entry]
    private let logger: Logger
    private let handlesSignals: Bool
    private let board: ExitBoard
    private let events: AsyncStream<Event>
    private let eventsContinuation: AsyncStream<Event>.Continuation
    private let hasRun = Atomic<Bool>(false)

    private enum Event: Sendable {
        case shutdownRequested(reason: String)
        case serviceEnded(index: Int)
    }

    /// A group of `entries` in start order; with `handlingSignals`, SIGTERM and SIGINT shut it down while it runs
    /// (any number of groups, one after another or at once; ``TerminationSignals``).
    public init(_ entries: [Entry], logger: Logger, handlingSignals: Bool = true) {
        self.entries = entries
        self.logger = logger
        self.handlesSignals = handlingSignals
        self.board = ExitBoard(count: entries.count)
        (events, eventsContinuation) = AsyncStream.makeStream(of: Event.self)
    }

    /// Asks the group to shut down, as a termination signal would. Safe from any thread, any number of times.
    public func triggerShutdown(reason: String = "requested") {
        eventsContinuation.yield(.shutdownRequested(reason: reason))
    }

    /// Starts every service, waits until the group must end, then stops them in reverse order; rethrows the first
    /// error a service threw. Runs once.
    public func run() async throws {
        precondition(!hasRun.exchange(true, ordering: .acquiringAndReleasing), "a ServiceGroup runs once")
        // Subscribed before any service starts, unsubscribed when the group is done.
        let signals = handlesSignals ? TerminationSignals() : nil
        let signalWatcher = signals.map(watch)
        defer {
            signals?.cancel()
            signalWatcher?.cancel()
        }

        var tasks: [Task<Void, Never>] = []
        let shutdownSignals = entries.map { _ in ShutdownSignal() }
        for (index, entry) in entries.enumerated() {
            let service = entry.service
            let board = board
            let continuation = eventsContinuation
            logger.debug("starting service", ["service": service.name])
            tasks.append(
                Task { [shutdownSignal = shutdownSignals[index]] in
                    do {
                        try await ShutdownSignal.$current.withValue(shutdownSignal) { try await service.run() }
                        board.finish(index, error: nil)
                    } catch {
                        board.finish(index, error: error)
                    }
                    continuation.yield(.serviceEnded(index: index))
                })
        }

        for await event in events {
            switch event {
            case .shutdownRequested(let reason):
                logger.info("shutting down", ["reason": reason])
            case .serviceEnded(let index):
                let name = entries[index].service.name
                if let error = board.error(of: index) {
                    logger.error(
                        "service failed; shutting down", ["service": name, "error": String(describing: error)])
                } else {
                    logger.info("service ended; shutting down", ["service": name])
                }
            }
            break
        }

        for index in entries.indices.reversed() {
            let entry = entries[index]
            let started = ContinuousClock.now
            shutdownSignals[index].request()
            if await board.waitForExit(of: index, timeout: entry.shutdownTimeout) {
                let elapsed = ContinuousClock.now - started
                logger.debug(
                    "service stopped",
                    [
                        "service": entry.service.name,
                        "milliseconds": String(
                            elapsed.components.seconds * 1000
                                + elapsed.components.attoseconds / 1_000_000_000_000_000),
                    ])
            } else {
                // Cancellation is the hurry: every wait of a well-behaved stop path returns at once.
                tasks[index].cancel()
                logger.error(
                    "service did not stop within its bound; cancelled it and left it behind",
                    ["service": entry.service.name, "bound_seconds": String(entry.shutdownTimeout.components.seconds)])
            }
        }
        eventsContinuation.finish()
        if let error = board.firstError { throw error }
    }

    private func watch(_ signals: TerminationSignals) -> Task<Void, Never> {
        let logger = logger
        return Task { [weak self] in
            var count = 0
            for await signalNumber in signals.received {
                count += 1
                let name = signalNumber == SIGINT ? "SIGINT" : "SIGTERM"
                if count == 1 {
                    self?.triggerShutdown(reason: name)
                } else {
                    logger.error("second termination signal: exiting now", ["signal": name])
                    exit(130)
                }
            }
        }
    }
}

/// Which services have ended, with what error, and who waits for which: resumed exactly once each.
private final class ExitBoard: Sendable {
    private struct State {
        var ended: [Bool]
        var errors: [(any Error)?]
        var order: [Int] = []
        var waiters: [Int: [UInt64: CheckedContinuation<Bool, Never>]] = [:]
        var nextWaiter: UInt64 = 0
    }

    private let state: Mutex<State>

    init(count: Int) {
        state = Mutex(State(ended: Array(repeating: false, count: count), errors: Array(repeating: nil, count: count)))
    }

    func finish(_ index: Int, error: (any Error)?) {
        let waiting = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            state.ended[index] = true
            state.errors[index] = error
            state.order.append(index)
            return Array((state.waiters.removeValue(forKey: index) ?? [:]).values)
        }
        for continuation in waiting { continuation.resume(returning: true) }
    }

    func error(of index: Int) -> (any Error)? {
        state.withLock { $0.errors[index] }
    }

    /// The error of the first service that ended with one.
    var firstError: (any Error)? {
        state.withLock { state in
            let errors = state.errors
            return state.order.lazy.compactMap { errors[$0] }.first
        }
    }

    /// True once service `index` has ended; false when `timeout` passes first.
    func waitForExit(of index: Int, timeout: Duration) async -> Bool {
        await withCheckedContinuation { continuation in
            let token = state.withLock { state -> UInt64? in
                if state.ended[index] { return nil }
                state.nextWaiter += 1
                state.waiters[index, default: [:]][state.nextWaiter] = continuation
                return state.nextWaiter
            }
            guard let token else {
                continuation.resume(returning: true)
                return
            }
            let nanoseconds = max(
                0,
                timeout.components.seconds * 1_000_000_000
                    + timeout.components.attoseconds / 1_000_000_000)
            DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(nanoseconds))) { [self] in
                let expired = state.withLock { $0.waiters[index]?.removeValue(forKey: token) }
                expired?.resume(returning: false)
            }
        }
    }
}
