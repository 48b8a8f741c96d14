public import Collector
public import Detector
public import Lifecycle
public import Logging
public import RollupStore
public import Sink

/// What `flowmeter serve` runs: the collector, and with a store the rollup sink and the detector loop beside it.
public struct ServeConfiguration: Sendable {
    /// The collector's settings (listen address, keys, Kafka mode, limits, topics, logging).
    public var collector: CollectorConfiguration
    /// The rollup store's URL (an SQLite path, `sqlite:PATH` or `postgres://…`); nil runs the collector alone.
    public var storeURL: String?
    /// The in-process sink's consumer group; default `flowmeter-sink`.
    public var sinkGroup = RollupSinkConfiguration.defaults.groupID
    /// Where the in-process sink writes messages it cannot use; default ``defaultDeadLetterPath``.
    public var deadLetterPath: String? = Self.defaultDeadLetterPath
    /// How long the in-process sink remembers a counted batch (docs/api.md#ingest's dedupe horizon); default 1 h.
    public var dedupeHorizon = RollupSinkConfiguration.defaults.dedupeHorizon
    /// The detector loop's settings; it runs only with a store and a positive interval.
    public var detection = Detection()
    /// What the store keeps (with a store); the defaults (minutes 14 days, hours 400 days).
    public var retention = RetentionPolicy()
    /// Time between prunes of the store (the first at start); zero prunes never. Default 1 h.
    public var pruneInterval = RetentionPolicy.defaultPruneInterval
    /// How the compatibility API (`GET /v1/compatibility`, with a store) keeps its answers.
    public var compatibility = CompatibilityConfiguration()

    /// The in-process detector: how often (zero: never), over what window, where alerts go, who owns what.
    public struct Detection: Sendable {
        /// Time between passes; zero runs no detector. Default 60 s.
        public var interval: Duration = .seconds(60)
        /// The window each pass examines. Default 1 h.
        public var window: Duration = .seconds(3600)
        /// Alertmanager, when configured.
        public var notifier: AlertmanagerNotifier?
        /// The ungated-type finder with its thresholds.
        public var ungated = UngatedTypeFinder()
        /// Who owns what: each alert's `team` label.
        public var owners: OwnerRules?

        /// The defaults.
        public init() {}
    }

    /// Where a sink writes the messages it cannot use, unless told otherwise: `flowmeter-dead-letters.jsonl`.
    public static let defaultDeadLetterPath = "flowmeter-dead-letters.jsonl"

    /// A configuration for `collector` with the defaults for the rest.
    public init(collector: CollectorConfiguration) {
        self.collector = collector
    }
}

/// The running `flowmeter serve`, built and ready: run `group`; the collector and store are there for callers
/// (tests, the demo) that need its port or its data.
public struct ServeRuntime: Sendable {
    /// The services in start order: the sink (with a store: reading Kafka, or in process with `--kafka none`), the
    /// collector's producer, spool replay and HTTP server, the detector (with a store). Stopped in reverse.
    public let group: ServiceGroup
    /// The collector.
    public let collector: Collector
    /// The store, with `storeURL`.
    public let store: (any RollupStore)?
    /// The in-process sink, with a store and Kafka.
    public let sink: RollupSink?
    /// The in-process sink of `--kafka none`, with a store.
    public let localSink: InProcessSink?
    /// The compatibility answers `GET /v1/compatibility` serves, with a store.
    public var compatibility: CompatibilityCache? = nil
}

/// Builds `flowmeter serve`: opens the store (its unreadable rows logged and counted), makes the collector (the
/// embedded cluster starts here, and its bootstrap servers are logged first), the sink and the detector, and wires
/// the sink's totals into the collector's metrics. Nothing listens or consumes until the group runs.
///
/// Throws ``RollupStoreError`` when the store cannot be opened, ``CollectorError`` for the collector, ``SinkError``
/// for the consumer.
public func makeServe(_ configuration: ServeConfiguration, logger: Logger) throws -> ServeRuntime {
    let storeLog = StoreLog(logger)
    let store = try configuration.storeURL.map { try openRollupStore(url: $0, options: storeLog.options) }
    let sinkLog = RollupSink.log(to: logger)
    var localSink: InProcessSink?
    if let store, configuration.collector.kafka == .none {
        var local = RollupSinkConfiguration(bootstrapServers: [])
        local.batchesTopic = configuration.collector.topics.batches
        local.dedupeHorizon = configuration.dedupeHorizon
        localSink = InProcessSink(configuration: local, store: store, log: sinkLog)
    }
    // With a store, GET /v1/compatibility answers from memory, refreshed by a service below.
    let compatibility = store.map { _ in CompatibilityCache() }
    var collectorConfiguration = configuration.collector
    if let compatibility {
        collectorConfiguration.additionalRoutes.append(
            CompatibilityHandler(keys: configuration.collector.keys, cache: compatibility).route)
    }
    let collector = try makeCollector(
        configuration: collectorConfiguration, logger: logger, store: store.map { StoreWriter(store: $0) },
        handoff: localSink.map { InProcessHandoff(sink: $0) })
    storeLog.attach(collector.metrics)

    var entries: [ServiceGroup.Entry] = []
    var sink: RollupSink?
    if let localSink {
        collector.metrics.attachSink {
            let counters = localSink.totals
            return CollectorMetrics.SinkCounters(
                applied: UInt64(counters.applied), duplicates: UInt64(counters.duplicates),
                badMessages: UInt64(counters.badMessages), deploys: 0, deadLetters: 0)
        }
        collector.attachSinkReadiness { localSink.stall.map { ($0.reason, $0.message) } }
        // Started first, stopped last: it commits what the collector handed it before its HTTP server stopped.
        entries.append(ServiceGroup.Entry(localSink, shutdownTimeout: .seconds(35)))
    }
    if let store, !collector.bootstrapServers.isEmpty {
        var sinkConfiguration = RollupSinkConfiguration(bootstrapServers: collector.bootstrapServers)
        sinkConfiguration.groupID = configuration.sinkGroup
        sinkConfiguration.batchesTopic = configuration.collector.topics.batches
        sinkConfiguration.deploysTopic = configuration.collector.topics.deploys
        sinkConfiguration.manifestsTopic = configuration.collector.topics.manifests
        sinkConfiguration.deadLetterPath = configuration.deadLetterPath
        sinkConfiguration.dedupeHorizon = configuration.dedupeHorizon
        // The same TLS and SASL settings as the collector's producer: one cluster, one set of credentials.
        sinkConfiguration.consumerProperties = configuration.collector.kafkaProperties
        let made = try RollupSink(configuration: sinkConfiguration, store: store, log: sinkLog)
        collector.metrics.attachSink {
            let counters = made.counters
            return CollectorMetrics.SinkCounters(
                applied: UInt64(counters.applied), duplicates: UInt64(counters.duplicates),
                badMessages: UInt64(counters.badMessages), deploys: UInt64(counters.deploys),
                deadLetters: UInt64(counters.deadLetters))
        }
        // /readyz says so while the sink is stalled, as `flowmeter sink --ops-listen` does (docs/collector.md).
        collector.attachSinkReadiness { made.stall.map { ($0.reason, $0.message) } }
        // Started first, stopped last: the collector's last batches are in Kafka by then, and the sink keeps
        // consuming (up to 15 s) until it has counted them.
        let drain: @Sendable () -> Duration = { collector.acceptedBatches > 0 ? .seconds(15) : .zero }
        entries.append(ServiceGroup.Entry(RollupSinkService(made, drain: drain), shutdownTimeout: .seconds(35)))
        sink = made
    }
    if let store,
        let prune = StorePruneService.ifWanted(
            store: store, policy: configuration.retention, every: configuration.pruneInterval, logger: logger)
    {
        entries.append(prune)
    }
    if let store, let compatibility {
        entries.append(
            ServiceGroup.Entry(
                CompatibilityRefresh(
                    store: store, cache: compatibility, configuration: configuration.compatibility, logger: logger),
                shutdownTimeout: .seconds(15)))
    }
    entries += collector.services
    let detection = configuration.detection
    if let store, detection.interval > .zero {
        let pass = DetectorPass(
            store: store, producer: collector.producer, topic: configuration.collector.topics.alerts,
            notifier: detection.notifier, window: detection.window, appID: nil, ungated: detection.ungated,
            owners: detection.owners)
        // Last started, first stopped: its alerts go out through the collector's producer, which flushes later.
        entries.append(
            ServiceGroup.Entry(
                DetectorService(pass, every: detection.interval, logger: logger), shutdownTimeout: .seconds(15)))
    }
    return ServeRuntime(
        group: ServiceGroup(entries, logger: logger), collector: collector, store: store, sink: sink,
        localSink: localSink, compatibility: compatibility)
}
