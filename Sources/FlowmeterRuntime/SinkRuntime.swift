public import Lifecycle
public import Logging
public import RollupStore
public import Sink

/// What `flowmeter sink` runs: where to read, which store to write, where dead letters go.
public struct SinkRuntimeConfiguration: Sendable {
    /// The consumer's settings (brokers, group, topics, batch size, dead-letter file).
    public var sink: RollupSinkConfiguration
    /// The store URL: an SQLite path, `sqlite:PATH` or `postgres://…`.
    public var storeURL: String

    /// A configuration with the sink's defaults.
    public init(sink: RollupSinkConfiguration, storeURL: String) {
        self.sink = sink
        self.storeURL = storeURL
    }
}

/// The running `flowmeter sink`: its group, and the sink for its totals.
public struct SinkRuntime: Sendable {
    /// The services, ready to run.
    public let group: ServiceGroup
    /// The sink (for its counters).
    public let sink: RollupSink
    /// The store it writes.
    public let store: any RollupStore
}

/// Builds `flowmeter sink`: opens the store (unreadable rows are logged) and the consumer; nothing runs until the
/// group does. Throws ``RollupStoreError`` or ``SinkError``.
public func makeSink(_ configuration: SinkRuntimeConfiguration, logger: Logger) throws -> SinkRuntime {
    let store = try openRollupStore(url: configuration.storeURL, options: StoreLog(logger).options)
    let sink = try RollupSink(configuration: configuration.sink, store: store, log: RollupSink.log(to: logger))
    let group = ServiceGroup(
        [ServiceGroup.Entry(RollupSinkService(sink), shutdownTimeout: .seconds(35))], logger: logger)
    return SinkRuntime(group: group, sink: sink, store: store)
}
