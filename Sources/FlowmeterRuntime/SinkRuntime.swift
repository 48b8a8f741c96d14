public import Collector
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
    public var pruneInterval = RetentionPolicy.defaultPruneInterval
    /// Where `/healthz`, `/readyz` and `/metrics` are served (`--ops-listen`); nil serves none.
    public var opsListen: CollectorConfiguration.ListenAddress?
    /// The store's timeouts (PostgreSQL); the URL's own settings win.
    public var storeOptions = RollupStoreOptions()

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
    /// The operations listener, with `opsListen`.
    public let operations: OperationsServer?
}

/// Builds `flowmeter sink`: opens the store (unreadable rows are logged), the consumer, with `opsListen` the
/// operations listener (started first, stopped last) and, with a positive prune interval, retention (stopped first);
/// nothing runs until the group does. `/readyz` is 503 while the sink is stalled (``RollupSink/stall``). Throws
/// ``RollupStoreError`` or ``SinkError``.
public func makeSink(_ configuration: SinkRuntimeConfiguration, logger: Logger) throws -> SinkRuntime {
    var options = StoreLog(logger).options
    options.postgresTimeouts = configuration.storeOptions.postgresTimeouts
    let store = try openRollupStore(url: configuration.storeURL, options: options)
    let metrics = SinkMetrics()
    let commitSeconds = metrics.commitSeconds
    let sink = try RollupSink(
        configuration: configuration.sink, store: store, log: RollupSink.log(to: logger),
        observeCommit: { commitSeconds.observe($0) })
    var entries: [ServiceGroup.Entry] = []
    let operations = configuration.opsListen.map { address in
        OperationsServer(
            address: address, metrics: metrics.registry, logger: logger,
            readiness: { sink.stall.map { ($0.reason, $0.message) } }, refresh: { metrics.refresh(from: sink) })
    }
    if let operations { entries.append(ServiceGroup.Entry(operations, shutdownTimeout: .seconds(5))) }
    entries.append(ServiceGroup.Entry(RollupSinkService(sink), shutdownTimeout: .seconds(35)))
    if let prune = StorePruneService.ifWanted(
        store: store, policy: configuration.retention, every: configuration.pruneInterval, logger: logger)
    {
        entries.append(prune)
    }
    let group = ServiceGroup(entries, logger: logger)
    return SinkRuntime(group: group, sink: sink, store: store, operations: operations)
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
