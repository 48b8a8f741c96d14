/// A long-running part of a Flowmeter process: the HTTP server, the producer's poll loop, the rollup publisher, the
/// sink, the detector loop.
///
/// `run()` starts the part, runs until the task running it is cancelled (or the part is done), then stops the part
/// gracefully before returning. A ``ServiceGroup`` starts services in order and cancels them in reverse order, one at
/// a time, so `run()` must return promptly once cancelled: within the bound the group gives it.
public protocol Service: Sendable {
    /// A short name for logs, such as `http-server` or `rollup-sink`.
    var name: String { get }

    /// Starts, runs until cancelled, stops; throws when the service cannot start or fails for good.
    func run() async throws
}
