public import Collector
public import Detector
public import Kafka
public import Lifecycle
public import Logging
import RollupStore

/// What `flowmeter watch` runs: the detector loop over a store, publishing alerts to Kafka and Alertmanager.
public struct WatchConfiguration: Sendable {
    /// The store URL.
    public var storeURL: String
    /// Bootstrap servers to publish alerts to; empty publishes to Kafka nothing.
    public var bootstrapServers: [String] = []
    /// librdkafka properties for the alerts producer (TLS, SASL), applied after Flowmeter's own; validated by the
    /// caller (``KafkaClientOptions/validated()``).
    public var kafkaProperties: [String: String] = [:]
    /// The alerts topic; default `flowmeter.alerts.v1`.
    public var alertsTopic = "flowmeter.alerts.v1"
    /// Time between passes; default 60 s.
    public var interval: Duration = .seconds(60)
    /// The window each pass examines; default 1 h.
    public var window: Duration = .seconds(3600)
    /// Only this app, or every app.
    public var appID: String?
    /// Alertmanager, when configured.
    public var notifier: AlertmanagerNotifier?
    /// The ungated-type finder with its thresholds.
    public var ungated = UngatedTypeFinder()
    /// Who owns what: each alert's `team` label.
    public var owners: OwnerRules?
    /// Where `/healthz`, `/readyz` and `/metrics` are served (`--ops-listen`); nil serves none.
    public var opsListen: CollectorConfiguration.ListenAddress?

    /// A configuration over `storeURL` with the defaults.
    public init(storeURL: String) {
        self.storeURL = storeURL
    }
}

/// The built `flowmeter watch`: the pass (for `--once`) and the group that repeats it.
public struct WatchRuntime: Sendable {
    /// One pass, ready to run.
    public let pass: DetectorPass
    /// The alerts producer's service and the detector loop, in start order.
    public let group: ServiceGroup
    /// The alerts producer, when there are bootstrap servers.
    public let producer: KafkaProducer?
    /// The operations listener, with `opsListen`.
    public let operations: OperationsServer?
}

/// Builds `flowmeter watch`: opens the store (unreadable rows logged), makes the alerts producer when there are
/// bootstrap servers. Throws ``RollupStoreError`` or ``KafkaError``.
public func makeWatch(_ configuration: WatchConfiguration, logger: Logger) throws -> WatchRuntime {
    let store = try openRollupStore(url: configuration.storeURL, options: StoreLog(logger).options)
    var producer: KafkaProducer?
    if !configuration.bootstrapServers.isEmpty {
        var producerConfiguration = KafkaProducerConfiguration(bootstrapServers: configuration.bootstrapServers)
        producerConfiguration.clientID = "flowmeter-watch"
        producerConfiguration.messageTimeout = .seconds(30)
        producerConfiguration.statisticsInterval = .zero
        producerConfiguration.additionalProperties = configuration.kafkaProperties
        producer = try KafkaProducer(configuration: producerConfiguration)
    }
    let pass = DetectorPass(
        store: store, producer: producer, topic: configuration.alertsTopic, notifier: configuration.notifier,
        window: configuration.window, appID: configuration.appID, ungated: configuration.ungated,
        owners: configuration.owners)
    var entries: [ServiceGroup.Entry] = []
    let metrics = WatchMetrics()
    let operations = configuration.opsListen.map { address in
        OperationsServer(
            address: address, metrics: metrics.registry, logger: logger, readiness: { metrics.readiness },
            refresh: {})
    }
    if let operations {
        // First started, last stopped: probes answer for as long as the process runs.
        entries.append(ServiceGroup.Entry(operations, shutdownTimeout: .seconds(5)))
    }
    if let producer {
        entries.append(
            ServiceGroup.Entry(
                KafkaProducerService(producer, flushTimeout: .seconds(10), logger: logger),
                shutdownTimeout: .seconds(15)))
    }
    entries.append(
        ServiceGroup.Entry(
            DetectorService(
                pass, every: configuration.interval, logger: logger,
                onPass: { error, duration in metrics.record(error, took: duration) }),
            shutdownTimeout: .seconds(15)))
    return WatchRuntime(
        pass: pass, group: ServiceGroup(entries, logger: logger), producer: producer, operations: operations)
}
