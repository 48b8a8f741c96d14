public import Lifecycle
public import Logging

/// The detector loop as a service: a ``DetectorPass`` now and then every interval until asked to shut down; a failed
/// pass is logged and tried again at the next interval.
///
/// Asked to shut down while a pass waits for Kafka to persist its alerts, the pass finishes or the group's bound runs
/// out;
/// the alert state is in the store, so the next run sends again what did not go out.
public struct DetectorService: Service {
    public let name = "detector"
    /// The pass it repeats.
    public let pass: DetectorPass
    /// Time between passes.
    public let interval: Duration
    private let logger: Logger
    private let onPass: @Sendable ((any Error)?, Duration) -> Void

    /// A loop of `pass` every `interval`; `onPass` is told each pass's error (nil when it succeeded) and duration.
    public init(
        _ pass: DetectorPass, every interval: Duration, logger: Logger,
        onPass: @escaping @Sendable ((any Error)?, Duration) -> Void = { _, _ in }
    ) {
        self.pass = pass
        self.interval = interval
        self.logger = logger
        self.onPass = onPass
    }

    public func run() async throws {
        logger.info(
            "detector started",
            [
                "interval_seconds": String(interval.components.seconds),
                "window_seconds": String(pass.window.components.seconds),
                "alertmanager": pass.notifier == nil ? "no" : "yes",
            ])
        while !isShuttingDown {
            let started = ContinuousClock.now
            do {
                DetectorPass.log(try await pass.run(), to: logger)
                onPass(nil, ContinuousClock.now - started)
            } catch {
                if isShuttingDown { break }
                onPass(error, ContinuousClock.now - started)
                logger.error("watch pass failed", ["error": String(describing: error)])
            }
            guard await sleepUnlessShuttingDown(for: interval) else { break }
        }
        logger.info("detector stopped")
    }
}
