/// librdkafka's in-process Kafka cluster: the real protocol on loopback, with fault injection.
///
/// `flowmeter serve --kafka embedded` and the tests use it. It keeps only the newest 5 MiB (or 100,000 message sets)
/// of each partition, so readers must keep up. Brokers are numbered 1 through `brokerCount`. Topics are not created
/// on demand (producers default to `allowsAutoCreateTopics = false`): call `createTopic` first.
public final class KafkaMockCluster: Sendable {
    /// A Kafka protocol request type (API key), for injecting errors into one kind of request.
    public struct API: Sendable, Hashable {
        /// The protocol's numeric API key.
        public let rawValue: Int16

        /// Wraps a Kafka API key.
        public init(rawValue: Int16) {
            self.rawValue = rawValue
        }

        /// Produce requests (key 0).
        public static let produce = API(rawValue: 0)
        /// Fetch requests (key 1).
        public static let fetch = API(rawValue: 1)
        /// Metadata requests (key 3).
        public static let metadata = API(rawValue: 3)
        /// Offset commits (key 8).
        public static let offsetCommit = API(rawValue: 8)
        /// Group coordinator lookups (key 10).
        public static let findCoordinator = API(rawValue: 10)
        /// Group joins (key 11).
        public static let joinGroup = API(rawValue: 11)
        /// Idempotent producer id requests (key 22).
        public static let initProducerID = API(rawValue: 22)
    }

    /// Pass as a broker id to mean every broker.
    public static let allBrokers = -1

    /// How many brokers the cluster has.
    public let brokerCount: Int
    private let cluster: RDKafkaMockCluster

    /// Starts a cluster of `brokers` brokers listening on loopback ports.
    public init(brokers: Int = 3) throws {
        precondition(brokers > 0, "a mock cluster needs at least one broker")
        brokerCount = brokers
        cluster = try RDKafkaMockCluster(brokers: brokers)
    }

    /// The `host:port` list clients bootstrap from.
    public var bootstrapServers: [String] {
        cluster.bootstrapServers.split(separator: ",").map(String.init)
    }

    /// Creates a topic; `replicationFactor` must not exceed `brokerCount`.
    public func createTopic(_ name: String, partitions: Int = 3, replicationFactor: Int = 1) throws {
        try cluster.createTopic(name, partitions: partitions, replicationFactor: replicationFactor)
    }

    /// Takes a broker down (`allBrokers` for every one): its connections close and new ones are refused.
    public func setBrokerDown(_ id: Int) throws {
        for broker in brokers(id) {
            try cluster.setBroker(broker, up: false)
        }
    }

    /// Brings a broker back up (`allBrokers` for every one).
    public func setBrokerUp(_ id: Int) throws {
        for broker in brokers(id) {
            try cluster.setBroker(broker, up: true)
        }
    }

    /// Delays every answer of a broker (`allBrokers` for every one) by `milliseconds`.
    public func setRoundTripTime(broker id: Int, milliseconds: Int) throws {
        for broker in brokers(id) {
            try cluster.setRoundTripTime(broker: broker, milliseconds: milliseconds)
        }
    }

    /// Moves a partition's leadership to a broker; -1 leaves the partition without a leader.
    public func setPartitionLeader(topic: String, partition: Int, broker: Int) throws {
        try cluster.setPartitionLeader(topic: topic, partition: partition, broker: broker)
    }

    /// Makes the next requests of type `api` (on any broker) fail with these errors, one each, in order.
    ///
    /// `KafkaError.Code.transport` closes the connection instead of answering, like a disconnect mid-request.
    public func pushRequestErrors(api: API, errors: [KafkaError.Code]) {
        cluster.pushRequestErrors(api: api.rawValue, errors: errors)
    }

    /// Drops the errors still waiting for requests of type `api`.
    public func clearRequestErrors(api: API) {
        cluster.clearRequestErrors(api: api.rawValue)
    }

    /// Makes metadata for a topic report an error (such as `topicAuthorizationFailed`); `.noError` clears it.
    public func setTopicError(_ topic: String, error: KafkaError.Code) {
        cluster.setTopicError(topic, error: error)
    }

    private func brokers(_ id: Int) -> ClosedRange<Int> {
        // librdkafka 2.0.2 does not take -1 for "all" in every mock command, so loop over the ids.
        id == Self.allBrokers ? 1...brokerCount : id...id
    }
}
