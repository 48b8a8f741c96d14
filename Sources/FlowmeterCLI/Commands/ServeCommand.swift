import Collector
import Detector
import FlowmeterRuntime
import Foundation
import Logging
import RollupStore
import Rollups
import Sink

/// `flowmeter serve`: the collector of docs/api.md (ingest, operations endpoints, topics), and with `--store` the sink
/// and the detector; this file only maps options onto a `ServeConfiguration` and runs the group `makeServe` builds.
enum ServeCommand {
    static var command: Command {
        let collector = OptionDefaults.collector
        let serve = OptionDefaults.serve
        return Command(
            name: "serve",
            abstract: "Run the collector: POST /v1/diagnostics into Kafka, with /metrics, /healthz and /readyz.",
            discussion: """
                Each accepted batch becomes one record of the batches topic; answers 202 only once Kafka (or the
                spool) has it (--ack delivery), or as soon as it is queued (--ack enqueue). SIGTERM or SIGINT stops
                accepting, finishes requests in flight, flushes the producer (bounded by --shutdown-timeout) and exits 0. Logs go to standard error, one line each.
                Every option also reads FLOWMETER_<OPTION> (e.g. FLOWMETER_LISTEN) and the JSON file of --config.
                The install-ID salt (at least 16 bytes) is read from --salt-file, or as hex from FLOWMETER_SALT; a
                secret given on the command line is visible in ps and is warned about. With --ops-listen, /metrics
                is served on that address only. An ingest key is public once an app ships it: the key is checked
                before the body is read, and every answer costs the key (docs/collector.md, "What one key can cost").
                With --store, deploy markers are recorded there, and the sink runs in this process, building the
                rollups from the batches topic exactly once (with --kafka none, the same sink takes the batch records
                in process). The query commands read ./flowmeter.sqlite
                unless --store or FLOWMETER_STORE names another store.
                With --store, the detector also runs here every --detect-interval (0 turns it off), the same pass as
                `flowmeter watch` over the last --detect-window: opened and resolved alerts go to the alerts topic
                (unless --kafka none) and, with --alertmanager, to Alertmanager; it stops before Kafka is flushed.
                See docs/collector.md, docs/sink.md and docs/metrics.md.
                """,
            options: [
                .value("config", "FILE", help: "JSON object of option names to values, read before the defaults."),
                .value(
                    "listen", "HOST:PORT", help: "Address to listen on.", default: "\(collector.host):\(collector.port)"
                ),
                .value(
                    "ops-listen", "HOST:PORT", help: "Serve /metrics here only (and /healthz, /readyz on both)."),
                .value(
                    "keys", "FILE",
                    help: "Keys file: {\"ingestKeys\": [{\"key\", \"apps\"}], \"readKeys\", \"adminKeys\"}."),
                .value(
                    "kafka", "MODE", help: "embedded | none | HOST:PORT[,HOST:PORT...].",
                    default: collector.kafka.description),
                SharedOptions.kafkaClient[0],
                SharedOptions.kafkaClient[1],
                .value(
                    "ack", "MODE", help: "delivery (202 after Kafka persisted) | enqueue.",
                    default: collector.ackMode.rawValue),
                .value("salt-file", "FILE", help: "File holding the secret install-ID salt (raw bytes or hex)."),
                .secret("salt", "HEX", help: "The salt as hex: set FLOWMETER_SALT (on argv it is warned about)."),
                .value("collector-id", "NAME", help: "This collector's name in events.", default: "the host name"),
                .value(
                    "max-body-bytes", "BYTES", help: "Largest request body as sent (413 above).",
                    default: OptionDefaults.bytes(collector.maxBodyBytes)),
                .value(
                    "max-inflated-bytes", "BYTES", help: "Largest body after gzip/deflate (413).",
                    default: OptionDefaults.bytes(collector.maxInflatedBytes)),
                .value(
                    "max-events-per-batch", "N", help: "Most events per batch (whole batch 413).",
                    default: String(collector.maxEventsPerBatch)),
                .value(
                    "max-event-age", "DURATION", help: "Older events are dropped and reported.",
                    default: OptionDefaults.duration(collector.maxEventAge)),
                .value(
                    "max-future-skew", "DURATION", help: "Events further ahead are dropped.",
                    default: OptionDefaults.duration(collector.maxFutureSkew)),
                .value(
                    "response-deadline", "DURATION", help: "Wait for Kafka before 503.",
                    default: OptionDefaults.duration(collector.responseDeadline)),
                .value(
                    "request-deadline", "DURATION", help: "Time to receive one request.",
                    default: OptionDefaults.duration(collector.requestDeadline)),
                .value(
                    "connection-limit", "N", help: "Most open connections.", default: String(collector.connectionLimit)),
                .value(
                    "per-ip-connection-limit", "N", help: "Most open connections per IP.",
                    default: String(collector.perIPConnectionLimit)),
                .value(
                    "max-body-bytes-in-flight", "BYTES", help: "Body bytes held at once (503 past it).",
                    default: OptionDefaults.bytes(collector.maxBodyBytesInFlight)),
                .value(
                    "max-body-bytes-in-flight-per-key", "BYTES", help: "Body bytes held at once per key (503).",
                    default: OptionDefaults.bytes(collector.maxBodyBytesInFlightPerKey)),
                .value("threads", "N", help: "HTTP worker threads.", default: "the CPUs this process may use"),
                .value(
                    "http-connection-memory", "BYTES", help: "Per-connection memory for headers (431 past it).",
                    default: OptionDefaults.bytes(collector.connectionMemory)),
                .value(
                    "rate-limit", "EVENTS/S", help: "Per-key rate for keys without their own.",
                    default: String(Int(collector.defaultRateLimit.perSecond))),
                .value(
                    "rate-burst", "EVENTS", help: "Per-key burst for keys without their own.",
                    default: String(Int(collector.defaultRateLimit.burst))),
                .value("batches-topic", "NAME", help: "Topic of batch records.", default: collector.topics.batches),
                .value(
                    "max-record-bytes", "BYTES", help: "Largest batch record (larger batches are split).",
                    default: OptionDefaults.bytes(collector.maxRecordBytes)),
                .value("alerts-topic", "NAME", help: "Topic of alerts.", default: collector.topics.alerts),
                .value("deploys-topic", "NAME", help: "Topic of deploy markers.", default: collector.topics.deploys),
                .value(
                    "kafka-linger", "DURATION", help: "Producer linger.ms.",
                    default: OptionDefaults.duration(collector.kafkaLinger)),
                .value(
                    "kafka-linger-mode", "MODE",
                    help: "adaptive (send once every connection waits for its 202) | fixed (always the linger).",
                    default: collector.kafkaLingerMode.rawValue),
                .value(
                    "kafka-queue-max-bytes", "BYTES", help: "Bound on the producer's local queue (then the spool).",
                    default: OptionDefaults.bytes(collector.kafkaQueueMaxBytes)),
                .value("store", "PATH|URL", help: "Rollup store (SQLite path or postgres://…); runs the sink here."),
                .value("sink-group", "NAME", help: "Consumer group of the in-process sink.", default: serve.sinkGroup),
                SharedOptions.deadLetters,
            ] + SharedOptions.retention + [
                SharedOptions.dedupeHorizon,
                .value(
                    "detect-interval", "DURATION", help: "Detector passes over --store (0: none).",
                    default: OptionDefaults.duration(serve.detection.interval, unit: "s")),
                .value(
                    "detect-window", "DURATION", help: "The window each detector pass examines.",
                    default: OptionDefaults.duration(serve.detection.window)),
                .value(
                    "compatibility-refresh", "DURATION",
                    help: "Time between refreshes of GET /v1/compatibility's answers from --store.",
                    default: OptionDefaults.duration(serve.compatibility.refreshInterval)),
                .value("alertmanager", "URL", help: "Send the detector's alerts to this Alertmanager (v2 API)."),
            ] + SharedOptions.ungatedThresholds + [
                OwnerOptions.owners,
                .value(
                    "shutdown-timeout", "DURATION", help: "Bound on flushing Kafka at exit.",
                    default: OptionDefaults.duration(collector.shutdownFlushTimeout)),
                .value(
                    "spool", "DIR|none", help: "Disk spool for batches Kafka cannot take.",
                    default: OptionDefaults.spoolDirectory),
                .value(
                    "spool-max-bytes", "BYTES", help: "Bound on the disk spool (503 past it).",
                    default: OptionDefaults.bytes(OptionDefaults.spool.maxBytes)),
                .value(
                    "metrics-type-cap", "N", help: "Widget types per app and kind in metrics.",
                    default: String(collector.metricsTypeCap)),
                .value(
                    "log-level", "LEVEL", help: "debug | info | warning | error.", default: collector.logLevel.rawValue),
                .value("log-format", "FORMAT", help: "json | logfmt.", default: collector.logFormat.rawValue),
            ],
            run: { arguments in try await run(arguments) }
        )
    }

    private static func run(_ arguments: ParsedArguments) async throws -> Int32 {
        let configuration = try serveConfiguration(from: arguments)
        let logger = Logger(threshold: configuration.collector.logLevel, format: configuration.collector.logFormat)
        let serve: ServeRuntime
        do {
            serve = try makeServe(configuration, logger: logger)
        } catch let error as RollupStoreError {
            logger.error(
                "serve failed: cannot open the store",
                ["store": configuration.storeURL.map(redactedStoreURL) ?? "", "error": String(describing: error)])
            return 1
        } catch let error as CollectorError {
            logger.error("serve failed", ["error": error.description])
            return 1
        }
        do {
            try await serve.group.run()
        } catch let error as CollectorError {
            logger.error("serve failed", ["error": error.description])
            return 1
        }
        var fields: [(key: String, value: String)] = []
        if let counters = serve.sink?.counters ?? serve.localSink?.totals {
            fields += [
                ("sink_counted", String(counters.applied)), ("sink_duplicates", String(counters.duplicates)),
                ("sink_bad_messages", String(counters.badMessages)),
            ]
        }
        logger.log(.info, "stopped", fields: fields)
        return 0
    }

    /// Maps every option of `serve` onto the runtime's configuration, before anything runs; usage errors name the
    /// option.
    static func serveConfiguration(from arguments: ParsedArguments) throws(CommandUsageError) -> ServeConfiguration {
        var configuration = ServeConfiguration(collector: try self.configuration(from: arguments))
        if let url = arguments.value("store"), !url.isEmpty {
            configuration.storeURL = url
            // docs/api.md#reading: the read API and the console, over the same store.
            configuration.collector.additionalRoutes = ReadRoutes.routes(
                keys: configuration.collector.keys, storeURL: url,
                ownersPath: arguments.value("owners").flatMap { $0.isEmpty ? nil : $0 },
                owners: try OwnerOptions.rules(arguments))
        }
        configuration.dedupeHorizon = try SharedOptions.dedupeHorizon(arguments)
        configuration.sinkGroup = try arguments.required("sink-group")
        configuration.deadLetterPath = try arguments.required("dead-letters")
        configuration.detection = try detection(from: arguments)
        configuration.retention = try SharedOptions.retentionPolicy(arguments)
        configuration.pruneInterval = try SharedOptions.pruneInterval(arguments)
        if let refresh = try arguments.parsed(
            "compatibility-refresh", as: "a positive duration such as 30s",
            { OptionValues.duration($0).flatMap { $0 > .zero ? $0 : nil } })
        {
            configuration.compatibility.refreshInterval = refresh
        }
        return configuration
    }

    /// Maps `--detect-interval`, `--detect-window`, `--alertmanager`, `--owners` and the ungated thresholds; usage
    /// errors name the option.
    static func detection(from arguments: ParsedArguments) throws(CommandUsageError) -> ServeConfiguration.Detection {
        var detection = ServeConfiguration.Detection()
        detection.interval =
            try arguments.parsed("detect-interval", as: "a duration such as 60s, 5m, or 0 for none") {
                OptionValues.duration($0)
            } ?? detection.interval
        detection.window =
            try arguments.parsed("detect-window", as: "a positive duration such as 30m or 1h") {
                OptionValues.duration($0).flatMap { $0 > .zero ? $0 : nil }
            } ?? detection.window
        detection.notifier = try SharedOptions.alertmanager(arguments)
        detection.ungated = try SharedOptions.ungatedFinder(arguments)
        detection.owners = try OwnerOptions.rules(arguments)
        return detection
    }

    /// Maps the parsed options onto a collector configuration; usage errors name the option.
    static func configuration(from arguments: ParsedArguments) throws(CommandUsageError) -> CollectorConfiguration {
        let path = arguments.commandPath
        // Checked first: a misspelled Kafka property is the same usage error whatever else is wrong.
        let kafkaProperties = try SharedOptions.kafkaClientOptions(arguments).properties
        let keysPath = try arguments.required("keys")
        let keys: IngestKeys
        do {
            keys = try IngestKeys(contentsOf: URL(fileURLWithPath: keysPath))
        } catch {
            throw CommandUsageError("--keys: \(error.description)", commandPath: path)
        }
        var configuration = CollectorConfiguration(keys: keys)
        let listen = try address(arguments, "listen")
        configuration.host = listen.host
        configuration.port = listen.port
        if let ops = arguments.value("ops-listen"), !ops.isEmpty {
            configuration.opsListen = try address(arguments, "ops-listen")
        }
        configuration.kafka =
            try arguments.parsed("kafka", as: "embedded, none or HOST:PORT,...") {
                CollectorConfiguration.KafkaMode($0)
            } ?? configuration.kafka
        configuration.kafkaProperties = kafkaProperties
        configuration.ackMode =
            try arguments.parsed("ack", as: "delivery or enqueue") {
                CollectorConfiguration.AckMode(rawValue: $0)
            } ?? configuration.ackMode
        configuration.salt = try salt(arguments)
        if arguments.isSet("collector-id"), let name = arguments.value("collector-id") {
            configuration.collectorID = name
        }
        let bytes = "a byte count such as 1048576 or 1MiB"
        configuration.maxBodyBytes =
            try arguments.parsed("max-body-bytes", as: bytes, OptionValues.bytes) ?? configuration.maxBodyBytes
        configuration.maxInflatedBytes =
            try arguments.parsed("max-inflated-bytes", as: bytes, OptionValues.bytes) ?? configuration.maxInflatedBytes
        configuration.maxEventsPerBatch =
            try positive(arguments, "max-events-per-batch") ?? configuration.maxEventsPerBatch
        let duration = "a duration such as 500ms, 5s, 10m or 72h"
        configuration.maxEventAge =
            try arguments.parsed("max-event-age", as: duration, OptionValues.duration) ?? configuration.maxEventAge
        configuration.maxFutureSkew =
            try arguments.parsed("max-future-skew", as: duration, OptionValues.duration) ?? configuration.maxFutureSkew
        configuration.responseDeadline =
            try arguments.parsed("response-deadline", as: duration, OptionValues.duration)
            ?? configuration.responseDeadline
        configuration.requestDeadline =
            try arguments.parsed("request-deadline", as: duration, OptionValues.duration)
            ?? configuration.requestDeadline
        configuration.kafkaLinger =
            try arguments.parsed("kafka-linger", as: duration, OptionValues.duration) ?? configuration.kafkaLinger
        configuration.kafkaLingerMode =
            try arguments.parsed("kafka-linger-mode", as: "adaptive or fixed") {
                CollectorConfiguration.LingerMode(rawValue: $0)
            } ?? configuration.kafkaLingerMode
        configuration.shutdownFlushTimeout =
            try arguments.parsed("shutdown-timeout", as: duration, OptionValues.duration)
            ?? configuration.shutdownFlushTimeout
        configuration.kafkaQueueMaxBytes =
            try arguments.parsed("kafka-queue-max-bytes", as: bytes, OptionValues.bytes)
            ?? configuration.kafkaQueueMaxBytes
        let spool = try arguments.required("spool")
        if spool != "none" {
            var settings = CollectorConfiguration.DiskSpool(directory: spool)
            settings.maxBytes =
                try arguments.parsed("spool-max-bytes", as: bytes, OptionValues.bytes) ?? settings.maxBytes
            configuration.spool = settings
        }
        configuration.maxRecordBytes =
            try arguments.parsed("max-record-bytes", as: "a size of at least 64KiB") {
                OptionValues.bytes($0).flatMap { $0 >= 65_536 ? $0 : nil }
            } ?? configuration.maxRecordBytes
        configuration.connectionLimit = try positive(arguments, "connection-limit") ?? configuration.connectionLimit
        configuration.perIPConnectionLimit =
            try positive(arguments, "per-ip-connection-limit") ?? configuration.perIPConnectionLimit
        configuration.maxBodyBytesInFlight =
            try arguments.parsed("max-body-bytes-in-flight", as: bytes, OptionValues.bytes)
            ?? configuration.maxBodyBytesInFlight
        configuration.maxBodyBytesInFlightPerKey =
            try arguments.parsed("max-body-bytes-in-flight-per-key", as: bytes, OptionValues.bytes)
            ?? configuration.maxBodyBytesInFlightPerKey
        if arguments.isSet("threads") { configuration.threads = try positive(arguments, "threads") ?? 1 }
        configuration.connectionMemory =
            try arguments.parsed("http-connection-memory", as: bytes, OptionValues.bytes)
            ?? configuration.connectionMemory
        let rate = try arguments.parsed("rate-limit", as: "a positive number") {
            Double($0).flatMap { $0 > 0 ? $0 : nil }
        }
        let burst = try arguments.parsed("rate-burst", as: "a number of at least 1") {
            Double($0).flatMap { $0 >= 1 ? $0 : nil }
        }
        configuration.defaultRateLimit = TokenBucket.Limit(
            perSecond: rate ?? configuration.defaultRateLimit.perSecond,
            burst: burst ?? configuration.defaultRateLimit.burst)
        configuration.topics.batches = try arguments.required("batches-topic")
        configuration.topics.alerts = try arguments.required("alerts-topic")
        configuration.topics.deploys = try arguments.required("deploys-topic")
        configuration.metricsTypeCap =
            try arguments.parsed("metrics-type-cap", as: "a count") { Int($0).flatMap { $0 >= 0 ? $0 : nil } }
            ?? configuration.metricsTypeCap
        configuration.logLevel =
            try arguments.parsed("log-level", as: "debug, info, warning or error") {
                Logger.Level(rawValue: $0)
            } ?? configuration.logLevel
        configuration.logFormat =
            try arguments.parsed("log-format", as: "json or logfmt") {
                Logger.Format(rawValue: $0)
            } ?? configuration.logFormat
        return configuration
    }

    private static func address(
        _ arguments: ParsedArguments, _ name: String
    ) throws(CommandUsageError) -> CollectorConfiguration.ListenAddress {
        let text = try arguments.required(name)
        guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]) else {
            throw CommandUsageError(
                "invalid value '\(text)' for --\(name): expected HOST:PORT", commandPath: arguments.commandPath)
        }
        return CollectorConfiguration.ListenAddress(
            host: String(text[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]")), port: port)
    }

    private static func salt(_ arguments: ParsedArguments) throws(CommandUsageError) -> [UInt8]? {
        guard let salt = try givenSalt(arguments) else { return nil }
        guard salt.count >= minimumSaltBytes else {
            throw CommandUsageError(
                "the install-ID salt must be at least \(minimumSaltBytes) bytes (make one with openssl rand -hex 32)",
                commandPath: arguments.commandPath)
        }
        return salt
    }

    private static func givenSalt(_ arguments: ParsedArguments) throws(CommandUsageError) -> [UInt8]? {
        let path = arguments.commandPath
        if let file = arguments.value("salt-file"), !file.isEmpty {
            guard let data = FileManager.default.contents(atPath: file), !data.isEmpty else {
                throw CommandUsageError("--salt-file: cannot read a non-empty salt from \(file)", commandPath: path)
            }
            let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            return hexBytes(text) ?? Array(data)
        }
        if let hex = arguments.value("salt"), !hex.isEmpty {
            guard let bytes = hexBytes(hex) else {
                throw CommandUsageError(
                    "invalid value for --salt: expected non-empty, even-length hex", commandPath: path)
            }
            return bytes
        }
        return nil
    }

    private static func hexBytes(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard !digits.isEmpty, digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index...index + 1], as: UTF8.self), radix: 16) else {
                return nil
            }
            bytes.append(byte)
        }
        return bytes
    }

    private static func positive(_ arguments: ParsedArguments, _ name: String) throws(CommandUsageError) -> Int? {
        try arguments.parsed(name, as: "a positive integer") { Int($0).flatMap { $0 > 0 ? $0 : nil } }
    }
}
