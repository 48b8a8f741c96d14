import Foundation
package import HTTPServer
import Lifecycle
public import Logging

/// Everything `makeCollector(configuration:)` needs: where to listen, which keys, which Kafka, and every limit.
///
/// A `Sendable` value with the documented defaults of `flowmeter serve --help`; the CLI only maps its options onto
/// it, and tests build one directly. Durations and sizes are validated by `makeCollector`, not here.
public struct CollectorConfiguration: Sendable {
    /// Where the collector publishes.
    public enum KafkaMode: Sendable, Hashable, CustomStringConvertible {
        /// An in-process mock cluster of three brokers with the five topics; its bootstrap servers are logged first.
        case embedded
        /// No Kafka: decode, count and answer 202 without publishing (for trying the collector out).
        case none
        /// A real cluster at these `HOST:PORT` bootstrap servers.
        case brokers([String])

        /// Parses `embedded`, `none` or a comma-separated `HOST:PORT` list; nil for anything else.
        public init?(_ text: String) {
            switch text.trimmingCharacters(in: .whitespaces) {
            case "embedded": self = .embedded
            case "none": self = .none
            case "": return nil
            default:
                let servers = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                guard servers.allSatisfy({ $0.contains(":") && !$0.hasPrefix(":") && !$0.hasSuffix(":") }) else {
                    return nil
                }
                self = .brokers(servers)
            }
        }

        /// `embedded`, `none` or the servers joined by commas: what `init?(_:)` parses back.
        public var description: String {
            switch self {
            case .embedded: "embedded"
            case .none: "none"
            case .brokers(let servers): servers.joined(separator: ",")
            }
        }
    }

    /// When a batch is answered 202.
    public enum AckMode: String, Sendable, Hashable {
        /// After every accepted event's delivery report says persisted (the default; docs/api.md#ingest's durable 202).
        case delivery
        /// As soon as every accepted event is on the producer's queue: faster, but a crash can lose answered events.
        case enqueue
    }

    /// How long the events producer lingers before it sends (`--kafka-linger-mode`).
    public enum LingerMode: String, Sendable, Hashable {
        /// Up to `kafkaLinger`, and no longer once every open connection holds a request waiting for its delivery
        /// (`--ack delivery`): then nothing more can join the batches, so they are sent at once (the default).
        case adaptive
        /// Always `kafkaLinger`, as librdkafka does by itself.
        case fixed
    }

    /// The disk spool (docs/api.md#cli, `--spool DIR --spool-max-bytes N`): where a batch goes when Kafka does not take
    /// it within `threshold`, so it can still be answered 202.
    public struct DiskSpool: Sendable, Hashable {
        /// The directory of segment files; made when missing, and held by one collector at a time.
        public var directory: String
        /// The most bytes the segment files may take; past it batches that need the spool get 503. Default 1 GiB.
        public var maxBytes: Int = 1 << 30
        /// How long a batch waits for Kafka before it is spooled instead; default 1 s.
        public var threshold: Duration = .seconds(1)

        /// A spool in `directory` with the defaults.
        public init(directory: String) {
            self.directory = directory
        }
    }

    /// The Kafka topic names (defaults in docs/api.md#kafka-topics).
    public struct Topics: Sendable, Hashable {
        /// One record per accepted batch, the log the sinks build the store from; default `flowmeter.batches.v1`.
        public var batches = "flowmeter.batches.v1"
        /// Alerts; default `flowmeter.alerts.v1`.
        public var alerts = "flowmeter.alerts.v1"
        /// Deploy markers; default `flowmeter.deploys.v1`.
        public var deploys = "flowmeter.deploys.v1"
        /// Capability manifests (docs/api.md#capability-manifests), which every sink merges into its store; default
        /// `flowmeter.manifests.v1`.
        public var manifests = "flowmeter.manifests.v1"

        /// The default names.
        public init() {}

        /// The four names, batches first.
        public var all: [String] { [batches, alerts, deploys, manifests] }
    }

    /// An address to listen on: an IPv4 or IPv6 literal and a TCP port.
    public struct ListenAddress: Sendable, Hashable {
        /// The IP literal, such as `0.0.0.0`.
        public var host: String
        /// The TCP port; 0 picks a free one.
        public var port: UInt16

        /// The address `host:port`.
        public init(host: String, port: UInt16) {
            self.host = host
            self.port = port
        }
    }

    /// The address to listen on; default `127.0.0.1`. Use `0.0.0.0` to serve the network.
    public var host = "127.0.0.1"
    /// The TCP port; default 8080. 0 picks a free port (tests), readable from `Collector.port`.
    public var port: UInt16 = 8080
    /// The operations listener (`--ops-listen`, docs/api.md#operations-endpoints); nil (the default) serves `/metrics`
    /// on the ingest listener. When set, `/metrics` is served there only, and `/healthz` and `/readyz` on both: keep it
    /// off the network the apps reach.
    public var opsListen: ListenAddress?
    /// The most request-body bytes held at once, across every request; default 64 MiB. A request reserves its
    /// `Content-Length` before its body is read; past the budget it gets 503 + `Retry-After` from its headers.
    public var maxBodyBytesInFlight = 64 << 20
    /// The most request-body bytes held at once for one ingest key; default 32 MiB (503 past it).
    public var maxBodyBytesInFlightPerKey = 32 << 20
    /// The ingest keys (docs/api.md#keys-file).
    public var keys: IngestKeys
    /// Routes served beside the collector's own (`flowmeter serve`'s compatibility API, read API and console: docs/api.md#reading); none by
    /// default. A path the collector answers itself is not replaced.
    package var additionalRoutes: [HTTPRoute] = []
    /// Where to publish; default `.embedded`.
    public var kafka: KafkaMode = .embedded
    /// When to answer 202; default `.delivery`.
    public var ackMode: AckMode = .delivery
    /// The disk spool; nil for none (the default in code; `flowmeter serve` defaults to `flowmeter-spool` in the
    /// working directory, and `--spool none` turns it off). Without one, a batch Kafka does not take within
    /// `responseDeadline` gets 503. Unused in `.none` mode.
    public var spool: DiskSpool?
    /// The secret install-ID salt; nil makes a random one (pseudonyms then change at every restart). Required with
    /// `.brokers`: collectors with random salts would count one install once per collector.
    public var salt: [UInt8]?
    /// This collector's name in every published event (`collector`); default the host name.
    public var collectorID: String = ProcessInfo.processInfo.hostName
    /// The largest request body as sent (compressed or not); default 1 MiB. Larger → 413.
    public var maxBodyBytes = 1 << 20
    /// The largest body after inflating gzip or deflate; default 8 MiB. Larger → 413.
    public var maxInflatedBytes = 8 << 20
    /// The most events one batch may carry, counting broken ones; default 1,000. More → the whole batch gets 413.
    public var maxEventsPerBatch = 1_000
    /// Events that occurred longer ago than this (after skew correction) are dropped; default 72 h.
    public var maxEventAge: Duration = .seconds(72 * 3600)
    /// Events more than this far in the future (after skew correction) are dropped; default 10 min.
    public var maxFutureSkew: Duration = .seconds(600)
    /// How long a batch waits for Kafka before it gets 503 + `Retry-After`; default 5 s.
    public var responseDeadline: Duration = .seconds(5)
    /// The time a client has to send one whole request; default 10 s (slow clients are cut off).
    public var requestDeadline: Duration = .seconds(10)
    /// The most open connections; default 1,024.
    public var connectionLimit = 1024
    /// The most open connections from one IP address; default 256.
    public var perIPConnectionLimit = 256
    /// HTTP worker threads; default the processors the process may use (its CPU affinity and cgroup quota, see
    /// ``ProcessorBudget``), so a collector pinned to one core runs one worker instead of contending with itself.
    public var threads = ProcessorBudget.available()
    /// The memory libmicrohttpd keeps per connection for the request line, headers and read buffer; default 16 KiB,
    /// at least 4 KiB. A request whose headers do not fit gets 414 or 431; bodies stream past it. libmicrohttpd
    /// 0.9.75 clears the whole of it between two requests, so more costs a `memset` of its size per request.
    public var connectionMemory = 16 * 1024
    /// The topic names.
    public var topics = Topics()
    /// The per-key rate limit for keys without their own; default 1,000 events/s, bursts of 5,000.
    public var defaultRateLimit: TokenBucket.Limit = .defaultIngest
    /// How many widget types per app and kind get their own metric series; the rest are `__other__`; default 50.
    public var metricsTypeCap = 50
    /// The bound on flushing the producer at shutdown; default 30 s (docs/reliability.md K9).
    public var shutdownFlushTimeout: Duration = .seconds(30)
    /// How long to remember batch ids for retries; default 10 min.
    public var batchIDRetention: Duration = .seconds(600)
    /// `linger.ms` of the events producer; default 5 ms (DESIGN.md's budget).
    public var kafkaLinger: Duration = .milliseconds(5)
    /// Whether the linger ends early when every connection waits for its 202; default `.adaptive`.
    public var kafkaLingerMode: LingerMode = .adaptive
    /// The events producer's local queue bound in payload bytes (`queue.buffering.max.kbytes`); past it a batch goes
    /// to the spool (or is answered 503 without one). Default 32 MiB, about half a second of Kafka's pace at full
    /// load: with the spool behind it the queue is a buffer, not the outage store. A queued batch holds about three
    /// times its payload (its record block, librdkafka's per-message bookkeeping, the events kept for the metrics),
    /// so under `make bench` in `--ack enqueue` (intake faster than the mock cluster drains) 64 MiB reached 264 MiB
    /// resident, 48 MiB 262 MiB, 32 MiB 202 MiB.
    public var kafkaQueueMaxBytes = 32 << 20
    /// Extra librdkafka producer properties, applied last.
    public var kafkaProperties: [String: String] = [:]
    /// The largest batch record (the batches topic's message limit, `message.max.bytes`); a batch whose record
    /// would be larger is split into parts, the same way on every retry. Default 1,000,000 bytes (Kafka's default
    /// limit is 1,048,588).
    public var maxRecordBytes = 1_000_000
    /// The log threshold; default `.info`.
    public var logLevel: Logger.Level = .info
    /// The log line format; default `.json`.
    public var logFormat: Logger.Format = .json

    /// A configuration with the defaults and these keys.
    public init(keys: IngestKeys) {
        self.keys = keys
    }
}

/// The shortest install-ID salt a collector takes: 16 bytes (128 bits). A shorter one could be guessed, and with it
/// every install hash reversed by hashing candidate install ids.
public let minimumSaltBytes = 16
