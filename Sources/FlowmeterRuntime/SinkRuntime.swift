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
    /// What the store keeps; the defaults (minutes 14 days, hours 400 days).
    public var retention = RetentionPolicy()
    /// Time between prunes (the first at start); zero prunes never. Default 1 h.
    public var pruneInterval: Duration = .seconds(3600)

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

/// Builds `flowmeter sink`: opens the store (unreadable rows are logged), the consumer and, with a positive prune
/// interval, retention (stopped first); nothing runs until the group does. Throws ``RollupStoreError`` or ``SinkError``.
public func makeSink(_ configuration: SinkRuntimeConfiguration, logger: Logger) throws -> SinkRuntime {
    let store = try openRollupStore(url: configuration.storeURL, options: StoreLog(logger).options)
    let sink = try RollupSink(configuration: configuration.sink, store: store, log: RollupSink.log(to: logger))
    var entries = [ServiceGroup.Entry(RollupSinkService(sink), shutdownTimeout: .seconds(35))]
    if let prune = StorePruneService.ifWanted(
        store: store, policy: configuration.retention, every: configuration.pruneInterval, logger: logger)
    {
        entries.append(prune)
    }
    let group = ServiceGroup(entries, logger: logger)
    return SinkRuntime(group: group, sink: sink, store: store)
}

extension StorePruneService {
    /// The prune service's entry for `store`, or nil when `interval` is zero or the store cannot prune.
    static func ifWanted(
        store: any RollupStore, policy: RetentionPolicy, every interval: Duration, logger: Logger
    ) -> ServiceGroup.Entry? {
        guard interval > .zero, let maintained = store as? any RollupStoreMaintenance else { return nil }
        return ServiceGroup.Entry(
            StorePruneService(store: maintained, policy: policy, every: interval, log: RollupSink.log(to: logger)),
            shutdownTimeout: .seconds(10))
    }
}
