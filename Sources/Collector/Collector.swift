import FlowmeterModels
import Foundation
package import HTTPServer
import Hashing
public import Kafka
public import Lifecycle
public import Logging
import Metrics
import Synchronization

/// Builds a collector from `configuration`: validates it, starts the embedded cluster when asked, makes the
/// producer and the HTTP server, but listens only at `start()` or `run()`.
///
/// The CLI's `flowmeter serve` and the tests call this same builder. Logs go to `logger` (default: standard error
/// in the configured format); in embedded mode the first lines name the bootstrap servers.
///
/// With a `store`, deploy markers and manifests are recorded there too. Each accepted batch becomes one record of
/// `flowmeter.batches.v1` (in parts when large); in `.none` mode the records go to `handoff` (the in-process sink)
/// instead, and without one only the metrics count them.
public func makeCollector(
    configuration: CollectorConfiguration, logger: Logger? = nil, store: (any CollectorStore)? = nil,
    handoff: (any BatchRecordHandoff)? = nil
) throws(CollectorError) -> Collector {
    try Collector(configuration: configuration, logger: logger, store: store, handoff: handoff)
}

/// The ingest service: `POST /v1/diagnostics` into Kafka, with `/metrics`, `/healthz` and `/readyz`.
///
/// It keeps no counts: each accepted batch is one record of `flowmeter.batches.v1`, answered 202 once the record is
/// durable (Kafka, or the spool), and the sinks build the rollups from the log. It runs as services (``services``,
/// in start order: the producer's poll loop, the spool replay, the HTTP server) in a ``ServiceGroup``, which
/// `flowmeter serve` builds with the sink and the detector around them. Stopped in reverse: the HTTP server stops
/// intake and accepting and answers every request in flight (suspended ones from Kafka or their deadline), the
/// producer flushes within `shutdownFlushTimeout`; the embedded cluster goes last, with this object. `start()` and
/// `shutdown()` do the same in order for callers (tests) that hold the collector themselves.
public final class Collector: Sendable {
    /// The configuration it was built with.
    public let configuration: CollectorConfiguration
    /// The metrics `/metrics` renders.
    public let metrics: CollectorMetrics
    /// The logger.
    public let logger: Logger
    /// The embedded cluster in `.embedded` mode, else nil.
    public let embeddedCluster: KafkaMockCluster?
    /// The events producer, nil in `.none` mode.
    public let producer: KafkaProducer?
    /// The routes the server answers with; the fuzz targets drive requests through it in process, without sockets.
    package let router: HTTPRouter
    private let http: HTTPIngestService
    private let producerService: KafkaProducerService?
    private let spoolService: SpoolReplayService?
    private let spool: Spool?
    private let health: KafkaHealth
    private let readiness: Readiness
    private let isShutDown = Atomic<Bool>(false)

    init(
        configuration: CollectorConfiguration, logger givenLogger: Logger?, store: (any CollectorStore)?,
        handoff: (any BatchRecordHandoff)?
    ) throws(CollectorError) {
        try Self.validate(configuration)
        self.configuration = configuration
        let logger = givenLogger ?? Logger(threshold: configuration.logLevel, format: configuration.logFormat)
        self.logger = logger
        let metrics = CollectorMetrics(typeCap: configuration.metricsTypeCap)
        self.metrics = metrics
        let health = KafkaHealth(stallWindow: configuration.responseDeadline)
        self.health = health

        var servers: [String] = []
        switch configuration.kafka {
        case .none:
            embeddedCluster = nil
        case .embedded:
            do {
                let cluster = try KafkaMockCluster(brokers: 3)
                for topic in configuration.topics.all {
                    try cluster.createTopic(topic, partitions: 3, replicationFactor: 3)
                }
                embeddedCluster = cluster
                servers = cluster.bootstrapServers
                logger.info(
                    "embedded kafka cluster started",
                    [
                        "bootstrap_servers": servers.joined(separator: ","),
                        "topics": configuration.topics.all.joined(separator: ","),
                    ])
            } catch {
                throw CollectorError(.kafkaUnavailable, "could not start the embedded cluster: \(error)")
            }
        case .brokers(let list):
            embeddedCluster = nil
            servers = list
        }

        if servers.isEmpty {
            producer = nil
        } else {
            var producerConfiguration = KafkaProducerConfiguration(bootstrapServers: servers)
            producerConfiguration.clientID = "flowmeter-collector"
            producerConfiguration.linger = configuration.kafkaLinger
            producerConfiguration.queueBufferingMaxKilobytes = max(1, configuration.kafkaQueueMaxBytes >> 10)
            producerConfiguration.additionalProperties = configuration.kafkaProperties
            do {
                producer = try KafkaProducer(
                    configuration: producerConfiguration,
                    deliveryObserver: { report in
                        metrics.recordDelivery(report)
                        health.reported(success: report.error == nil)
                    },
                    connectionObserver: { problem in
                        // librdkafka's sentence names the broker and what failed; it holds no credentials.
                        if let problem {
                            logger.error(
                                "kafka connection failed",
                                ["code": problem.code.description, "reason": problem.message])
                        } else {
                            logger.info("kafka connection restored")
                        }
                    })
            } catch {
                throw CollectorError(.kafkaUnavailable, "could not make the Kafka producer: \(error)")
            }
        }

        let salt: [UInt8]
        if let configured = configuration.salt {
            salt = configured
        } else {
            do {
                salt = try randomBytes(count: 32)
            } catch {
                throw CollectorError(.randomnessUnavailable, "could not make a random salt")
            }
            logger.warning(
                "no install-ID salt configured: using a random one, so install hashes change at every restart",
                ["fix": "set --salt-file or FLOWMETER_SALT"])
        }

        // The spool sits between the senders and the producer: opened (and recovered) here, so a directory that
        // cannot be used fails the build, not the first outage.
        var delivery: SpoolingDelivery?
        var spoolService: SpoolReplayService?
        if let producer, let settings = configuration.spool {
            let spool = try Spool(
                configuration: Spool.Configuration(directory: settings.directory, maxBytes: settings.maxBytes),
                metrics: metrics, logger: logger)
            let spooling = SpoolingDelivery(
                spool: spool, producer: producer, health: health, metrics: metrics, threshold: settings.threshold)
            delivery = spooling
            spoolService = SpoolReplayService(
                delivery: spooling,
                replay: SpoolReplay(spool: spool, producer: producer, health: health, metrics: metrics, logger: logger),
                producer: producer, health: health, flushTimeout: configuration.shutdownFlushTimeout, logger: logger)
        }
        self.spool = delivery?.spool
        self.spoolService = spoolService

        let eventsProducer = producer
        // With a spool, everything the producer holds at the end is on disk already: its own flush is short.
        let producerFlush =
            delivery == nil ? configuration.shutdownFlushTimeout : min(configuration.shutdownFlushTimeout, .seconds(2))
        producerService = eventsProducer.map {
            KafkaProducerService($0, flushTimeout: producerFlush, logger: logger)
        }
        // Every record (batches, deploy markers, manifests) reaches Kafka this one way, the spool its one retry.
        let records = producer.map {
            RecordDelivery(producer: $0, spooling: delivery, health: health, logger: logger)
        }
        let ingest = IngestHandler(
            configuration: configuration, hasher: InstallIDHasher(salt: salt), delivery: records,
            handoff: producer == nil ? handoff : nil, metrics: metrics, logger: logger)
        let writes = AdminWrites(
            keys: configuration.keys, delivery: records, store: store, queue: AdminWriteQueue(), metrics: metrics,
            logger: logger)
        let deploys = DeployHandler(writes: writes, topic: configuration.topics.deploys)
        let manifests = ManifestHandler(writes: writes, topic: configuration.topics.manifests)

        var serverConfiguration = HTTPServerConfiguration()
        serverConfiguration.host = configuration.host
        serverConfiguration.port = configuration.port
        serverConfiguration.threadPoolSize = configuration.threads
        serverConfiguration.connectionMemoryLimit = configuration.connectionMemory
        serverConfiguration.connectionLimit = configuration.connectionLimit
        serverConfiguration.perIPConnectionLimit = configuration.perIPConnectionLimit
        serverConfiguration.requestDeadline = configuration.requestDeadline
        serverConfiguration.inactivityTimeout = configuration.requestDeadline
        serverConfiguration.maxBodyBytes = configuration.maxBodyBytes
        // The ingest path answers at its own deadline; the server's is the backstop that no suspension outlives.
        serverConfiguration.responseDeadline = configuration.responseDeadline + .seconds(2)
        serverConfiguration.timeoutResponse = IngestRejection.unavailableResponse
        serverConfiguration.retryAfter = { RetryAfter.unavailable() }
        // What one key can cost (docs/collector.md): the key is checked and its bucket peeked before the body is read,
        // and body bytes in flight are bounded in total and per key.
        let keyAnswers = KeyAnswerMetrics(registry: metrics.registry, keys: configuration.keys)
        serverConfiguration.admission = { head in
            head.method == .post && head.path == "/v1/diagnostics" ? ingest.admit(head) : .admit(client: nil)
        }
        serverConfiguration.maxBodyBytesInFlight = configuration.maxBodyBytesInFlight
        serverConfiguration.maxBodyBytesInFlightPerClient = configuration.maxBodyBytesInFlightPerKey
        serverConfiguration.bodyBudgetResponse = IngestRejection.unavailableResponse
        serverConfiguration.onRequestCompleted = { completion in
            metrics.recordRequest(completion)
            keyAnswers.record(completion)
        }
        if let producer, configuration.ackMode == .delivery, configuration.kafkaLingerMode == .adaptive {
            // Every client is waiting for its 202, so no more events can join the batches librdkafka is lingering
            // on: send them now (a lone client's answer no longer waits out linger.ms, and a closed loop of clients
            // does not idle through it). With connections idle or still sending, the linger batches as configured.
            serverConfiguration.onEveryConnectionWaiting = {
                metrics.lingerCutShort.increment()
                producer.sendQueuedNow()
            }
        }
        serverConfiguration.logHandler = { line in logger.debug("libmicrohttpd", ["line": line]) }

        let kafkaMode = configuration.kafka
        let producerForMetrics = producer
        let isUp: @Sendable () -> Bool = { kafkaMode == .none || health.isUp }
        let readiness = Readiness(kafkaMode: kafkaMode, health: health, spool: delivery?.spool, producer: producer)
        self.readiness = readiness
        var router = HTTPRouter()
        router.add(.post, "/v1/diagnostics") { request, responder in ingest.handle(request, responder) }
        router.add(.post, "/v1/deploys") { request, responder in deploys.handle(request, responder) }
        router.add(.post, "/v1/manifests") { request, responder in manifests.handle(request, responder) }
        let healthRoute: HTTPHandler = { _, responder in
            responder.respond(.json(status: .ok, #"{"status":"ok"}"#))
        }
        let readinessRoute: HTTPHandler = { _, responder in responder.respond(readiness.response()) }
        router.add(.get, "/healthz", handler: healthRoute)
        router.add(.get, "/readyz", handler: readinessRoute)
        let metricsRoute: HTTPHandler = { _, responder in
            metrics.refresh(producer: producerForMetrics)
            responder.respond(
                HTTPResponse(
                    status: .ok, headers: ["Content-Type": MetricsRegistry.contentType],
                    body: Array(metrics.registry.render().utf8)))
        }
        // docs/api.md#operations-endpoints: with an operations listener, /metrics is served there only.
        let operationsServer = configuration.opsListen.map { address in
            OperationsListener.server(
                address: address,
                router: OperationsListener.router(health: healthRoute, readiness: readinessRoute, metrics: metricsRoute)
            )
        }
        if operationsServer == nil { router.add(.get, "/metrics", handler: metricsRoute) }
        for route in configuration.additionalRoutes where !router.answers(route.method, route.path) {
            router.add(route.method, route.path, handler: route.handler)
        }
        self.router = router
        let server = HTTPServer(configuration: serverConfiguration, router: router)
        http = HTTPIngestService(
            server: server, operationsServer: operationsServer, ingest: ingest, configuration: configuration,
            logger: logger)
        keyAnswers.registerBodyBudget(server: server)
        metrics.registerGauges(
            server: server, producer: producer, isKafkaUp: isUp, version: flowmeterVersion,
            collectorID: configuration.collectorID)
        metrics.registerSpoolGauges(delivery?.spool)
    }

    /// The TCP port the server listens on once started.
    public var port: UInt16 { http.server.port }

    /// The TCP port of the operations listener once started, or nil without `opsListen`.
    public var operationsPort: UInt16? { http.operationsServer?.port }

    /// The bootstrap servers the producer uses (the embedded cluster's in embedded mode); empty in `.none` mode.
    public var bootstrapServers: [String] { producer?.configuration.bootstrapServers ?? [] }

    /// The collector's services in start order, each with its stop bound: the producer's poll loop (flush bound),
    /// the spool replay (with a spool), the HTTP server (response deadline plus drain).
    public var services: [ServiceGroup.Entry] {
        var entries: [ServiceGroup.Entry] = []
        if let producerService {
            entries.append(
                ServiceGroup.Entry(producerService, shutdownTimeout: configuration.shutdownFlushTimeout + .seconds(5)))
        }
        if let spoolService {
            // Stops after the HTTP server (whose last batches may need the spool) and before the producer.
            entries.append(
                ServiceGroup.Entry(spoolService, shutdownTimeout: configuration.shutdownFlushTimeout + .seconds(15)))
        }
        entries.append(ServiceGroup.Entry(http, shutdownTimeout: configuration.responseDeadline + .seconds(5)))
        return entries
    }

    /// Starts the spool replay, then listens; returns once connections are accepted (when listening fails, call
    /// `shutdown()` to close the spool).
    public func start() throws(CollectorError) {
        spoolService?.start()
        do {
            try http.start()
        } catch {
            throw error
        }
    }

    /// Stops accepting, finishes requests in flight, spools what Kafka has not taken,
    /// flushes the producer within the bound, and stops: the services' stops in reverse order.
    ///
    /// Idempotent. Requests arriving on kept-alive connections meanwhile get 503.
    public func shutdown() async {
        guard !isShutDown.exchange(true, ordering: .sequentiallyConsistent) else { return }
        let drained = await http.stop()
        await spoolService?.stop()
        let unflushed = await producerService?.stop() ?? 0
        logger.info("stopped", ["drained": String(drained), "unflushed": String(unflushed)])
    }

    /// Makes `/readyz` ask `stall` too, for the sink this process runs beside the collector (`flowmeter serve
    /// --store`): while it returns a stable word and a sentence (a `SinkStall`'s `reason` and `message`), `/readyz`
    /// answers 503 with them, as `flowmeter sink --ops-listen` does. The collector's own reasons come first.
    public func attachSinkReadiness(_ stall: @escaping @Sendable () -> (reason: String, message: String)?) {
        readiness.sink.attach(stall)
    }

    /// Batches answered 202 since the start.
    public var acceptedBatches: UInt64 { metrics.acceptedBatches.value }

    /// Messages in the disk spool not yet persisted by Kafka; 0 without a spool.
    public var spooledRecords: Int { spool?.status.records ?? 0 }

    private static func validate(_ configuration: CollectorConfiguration) throws(CollectorError) {
        func require(_ condition: Bool, _ message: String) throws(CollectorError) {
            if !condition { throw CollectorError(.invalidConfiguration, message) }
        }
        try require(configuration.maxBodyBytes > 0, "max-body-bytes must be positive")
        try require(configuration.maxInflatedBytes > 0, "max-inflated-bytes must be positive")
        try require(configuration.maxEventsPerBatch > 0, "max-events-per-batch must be positive")
        try require(configuration.maxEventAge > .zero, "max-event-age must be positive")
        try require(configuration.maxFutureSkew >= .zero, "max-future-skew must not be negative")
        try require(configuration.responseDeadline > .zero, "response-deadline must be positive")
        try require(configuration.requestDeadline > .zero, "request-deadline must be positive")
        try require(configuration.connectionLimit > 0, "connection-limit must be positive")
        try require(configuration.perIPConnectionLimit > 0, "per-ip-connection-limit must be positive")
        try require(configuration.threads > 0, "threads must be positive")
        try require(
            (4 * 1024...16 * 1024 * 1024).contains(configuration.connectionMemory),
            "http-connection-memory must be between 4KiB and 16MiB")
        try require(configuration.metricsTypeCap >= 0, "metrics-type-cap must not be negative")
        try require(!configuration.collectorID.isEmpty, "collector-id must not be empty")
        try require(
            configuration.salt.map { $0.count >= minimumSaltBytes } ?? true,
            "the install-ID salt must be at least \(minimumSaltBytes) bytes (32 random bytes recommended)")
        try require(configuration.maxBodyBytesInFlight > 0, "max-body-bytes-in-flight must be positive")
        try require(configuration.maxBodyBytesInFlightPerKey > 0, "max-body-bytes-in-flight-per-key must be positive")
        if case .brokers = configuration.kafka {
            // Every collector of a cluster must hash an install the same way, or it is counted once per collector.
            try require(
                configuration.salt != nil,
                "a real Kafka cluster needs the install-ID salt (--salt-file or FLOWMETER_SALT): collectors with "
                    + "random salts would count one install once per collector")
        }
        try require(configuration.topics.all.allSatisfy { !$0.isEmpty }, "topic names must not be empty")
        if let spool = configuration.spool {
            try require(!spool.directory.isEmpty, "the spool directory must not be empty")
            try require(spool.maxBytes > 0, "spool-max-bytes must be positive")
            try require(spool.threshold > .zero, "the spool threshold must be positive")
        }
    }
}
