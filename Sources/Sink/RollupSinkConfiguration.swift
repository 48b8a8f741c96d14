/// Where a ``RollupSink`` reads from and how it batches; the defaults suit production.
public struct RollupSinkConfiguration: Sendable, Hashable {
    /// The Kafka bootstrap servers, `HOST:PORT` each.
    public var bootstrapServers: [String]
    /// The consumer group; every sink of one store shares it. Default `flowmeter-sink`.
    public var groupID = "flowmeter-sink"
    /// The partial-rollups topic; default `flowmeter.rollups.v1`.
    public var rollupsTopic = "flowmeter.rollups.v1"
    /// The deploy-markers topic, also merged into the store; nil reads no deploys. Default `flowmeter.deploys.v1`.
    public var deploysTopic: String? = "flowmeter.deploys.v1"
    /// The capability-manifests topic (CONTRACT §7), also merged into the store; nil reads no manifests. Default
    /// `flowmeter.manifests.v1`. The topic must exist (Deploy/kafka/create-topics.sh makes it).
    public var manifestsTopic: String? = "flowmeter.manifests.v1"
    /// The most messages applied in one store transaction; default 5,000.
    public var maxBatch = 5_000
    /// How long one poll waits for the first message; also bounds how long `stop()` waits. Default 500 ms.
    public var pollTimeout: Duration = .milliseconds(500)
    /// The pause before applying a batch again after a retriable store error; default 1 s (doubling to 30 s).
    public var retryDelay: Duration = .seconds(1)
    /// The consumer's session timeout; default 10 s, so a crashed sink's partitions move on quickly.
    public var sessionTimeout: Duration = .seconds(10)
    /// Where messages the sink cannot use go (``DeadLetterFile``): ones that do not decode, and ones the store
    /// refuses for good. nil only logs and counts them. Default nil; the CLI sets `flowmeter-dead-letters.jsonl`.
    public var deadLetterPath: String?
    /// Extra librdkafka consumer properties, applied last.
    public var consumerProperties: [String: String] = [:]

    /// A configuration for these brokers with the defaults.
    public init(bootstrapServers: [String]) {
        self.bootstrapServers = bootstrapServers
    }
}
