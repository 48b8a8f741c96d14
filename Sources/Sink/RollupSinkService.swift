public import Lifecycle

/// A ``RollupSink`` as a service: consumes on its own thread from start; asked to shut down, keeps consuming for up to
/// `drain()` until three polls in a row find nothing new (so what collectors flushed at their shutdown reaches the store), then
/// leaves the group.
public struct RollupSinkService: Service {
    public let name = "rollup-sink"
    /// The sink it runs.
    public let sink: RollupSink
    private let drain: @Sendable () -> Duration

    /// A service for `sink`; `drain` is asked at stop time how long to keep consuming (zero: stop at once).
    public init(_ sink: RollupSink, drain: @escaping @Sendable () -> Duration = { .zero }) {
        self.sink = sink
        self.drain = drain
    }

    public func run() async throws {
        sink.start()
        await waitForShutdown()
        let drain = drain()
        await onThread(named: "rollup-sink-stop") { [sink] in sink.stop(draining: drain) }
    }
}
