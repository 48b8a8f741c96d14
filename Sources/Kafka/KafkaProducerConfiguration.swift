/// How a `KafkaProducer` talks to Kafka; the defaults are Flowmeter's reliability settings (docs/reliability.md).
///
/// The defaults favour durability: an idempotent producer with `acks=all`, a queue deep enough to ride out a minute of
/// broker outage at 5,000 events/s, and a message timeout (10 minutes) longer than any outage the spool is meant to
/// cover. `librdkafkaProperties()` is the only place these become librdkafka keys.
public struct KafkaProducerConfiguration: Sendable, Hashable {
    /// Which brokers must acknowledge a write before its delivery report says persisted.
    public enum Acknowledgements: String, Sendable, Hashable {
        /// Every in-sync replica (`acks=all`): required by the idempotent producer.
        case all
        /// Only the partition leader (`acks=1`).
        case leader = "1"
        /// No acknowledgement (`acks=0`): delivery reports say persisted without a broker's word.
        case none = "0"
    }

    /// The codec for message batches (`compression.codec`).
    public enum Compression: String, Sendable, Hashable {
        /// No compression.
        case none
        /// gzip: smallest, slowest.
        case gzip
        /// snappy.
        case snappy
        /// lz4: Flowmeter's default, cheapest per byte.
        case lz4
        /// zstd.
        case zstd
    }

    /// `host:port` of the brokers to bootstrap from (`bootstrap.servers`); must not be empty.
    public var bootstrapServers: [String]
    /// The client id brokers see in logs and quotas (`client.id`). Default `flowmeter`.
    public var clientID: String = "flowmeter"
    /// Whether the producer is idempotent (`enable.idempotence`): no duplicates from its own retries. Default `true`.
    public var isIdempotent: Bool = true
    /// `acks`. Default `.all`.
    public var acknowledgements: Acknowledgements = .all
    /// `max.in.flight.requests.per.connection`; at most 5 with idempotence. Default 5.
    public var maxInFlightRequestsPerConnection: Int = 5
    /// How long a message may wait for delivery before it fails with `messageTimedOut` (`message.timeout.ms`).
    /// Default 10 minutes: longer than the outages the collector's spool covers.
    public var messageTimeout: Duration = .seconds(600)
    /// How long a request may wait for a broker's answer (`socket.timeout.ms`). Default 30 s.
    public var socketTimeout: Duration = .seconds(30)
    /// The local queue's message cap (`queue.buffering.max.messages`): past it, enqueueing throws `queueFull`.
    /// Default 500,000.
    public var queueBufferingMaxMessages: Int = 500_000
    /// The local queue's size cap in KiB (`queue.buffering.max.kbytes`). Default 524,288 (512 MiB).
    public var queueBufferingMaxKilobytes: Int = 524_288
    /// How long the producer waits to fill a batch (`linger.ms`); below 5 ms it costs much more CPU. Default 20 ms.
    public var linger: Duration = .milliseconds(20)
    /// `compression.codec`. Default `.lz4`.
    public var compression: Compression = .lz4
    /// How often librdkafka emits its statistics JSON (`statistics.interval.ms`); zero turns it off. Default 10 s.
    public var statisticsInterval: Duration = .seconds(10)
    /// Whether producing to an unknown topic creates it (`allow.auto.create.topics`). Default `false`: topics are
    /// created by operators with the right replication.
    public var allowsAutoCreateTopics: Bool = false
    /// Extra librdkafka properties, applied last so they override any key above; librdkafka validates them when the
    /// producer is made.
    public var additionalProperties: [String: String] = [:]

    /// Makes a configuration with Flowmeter's defaults for the given brokers.
    public init(bootstrapServers: [String]) {
        self.bootstrapServers = bootstrapServers
    }

    /// Renders the configuration to librdkafka's keys and values: the single source of what the producer sets.
    public func librdkafkaProperties() -> [String: String] {
        var properties: [String: String] = [
            "bootstrap.servers": bootstrapServers.joined(separator: ","),
            "client.id": clientID,
            "enable.idempotence": String(isIdempotent),
            "acks": acknowledgements.rawValue,
            "max.in.flight.requests.per.connection": String(maxInFlightRequestsPerConnection),
            "message.timeout.ms": String(messageTimeout.kafkaMilliseconds),
            "socket.timeout.ms": String(socketTimeout.kafkaMilliseconds),
            "queue.buffering.max.messages": String(queueBufferingMaxMessages),
            "queue.buffering.max.kbytes": String(queueBufferingMaxKilobytes),
            "linger.ms": String(linger.kafkaMilliseconds),
            "compression.codec": compression.rawValue,
            "statistics.interval.ms": String(statisticsInterval.kafkaMilliseconds),
            "allow.auto.create.topics": String(allowsAutoCreateTopics),
        ]
        properties.merge(additionalProperties) { _, extra in extra }
        return properties
    }
}

extension Duration {
    // librdkafka takes whole milliseconds; sub-millisecond remainders are dropped.
    var kafkaMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
