/// Where a ``RollupSink`` reads from and how it batches; the defaults suit production.
public struct RollupSinkConfiguration: Sendable, Hashable {
    /// The Kafka bootstrap servers, `HOST:PORT` each.
    public var bootstrapServers: [String]
    /// The consumer group; every sink of one store shares it. Default `flowmeter-sink`.
    public var groupID = "flowmeter-sink"
    /// The batches topic, the log the rollups are built from; default `flowmeter.batches.v1`.
    public var batchesTopic = "flowmeter.batches.v1"
    /// The deploy-markers topic, also merged into the store; nil reads no deploys. Default `flowmeter.deploys.v1`.
    public var deploysTopic: String? = "flowmeter.deploys.v1"
    /// The capability-manifests topic (docs/api.md#capability-manifests), also merged into the store; nil reads no manifests. Default
    /// `flowmeter.manifests.v1`. The topic must exist (Deploy/kafka/create-topics.sh makes it).
    public var manifestsTopic: String? = "flowmeter.manifests.v1"
    /// How long a counted batch is remembered, so a copy (a retry through any collector) is not counted again;
    /// measured in the records' `receivedAt`. Default 1 h; docs/sink.md says what it costs.
    public var dedupeHorizon: Duration = .seconds(3600)
    /// The most counted batches remembered over every partition the sink holds; past it the oldest by `receivedAt`
    /// are forgotten first, whichever partition holds them (counted in ``RollupSinkCounters/dedupeEvicted``).
    /// Default 2,000,000 (about 300 MB; docs/design/log.md, "What the horizon costs").
    public var dedupeMaxEntries = 2_000_000
    /// The most messages read per poll; default 5,000. A step spans polls only while they come back full
    /// (``maxStepDuration``).
    public var maxBatch = 5_000
    /// How long a poll keeps gathering messages after the first arrived (up to ``maxBatch``), so that one step, one
    /// store transaction, counts more of them: a series-minute that many batches share is then read and written
    /// once instead of once per poll and partition. It adds at most this much to how fresh the store is. Zero steps
    /// whatever each poll found at once. Default 500 ms.
    public var stepInterval: Duration = .milliseconds(500)
    /// How long a step may go on reading polls that come back full (``maxBatch`` messages: the sink is behind)
    /// before it commits. A step ends with the first poll that is not full, so a sink that keeps up commits every
    /// poll; one that is behind counts several polls in one store transaction, dividing the store's work (which
    /// follows the rows a step touches, not its records) over more of them, and holds their rollups, not their
    /// records, meanwhile. It adds at most this much to how fresh the store is while catching up. Default 2 s.
    public var maxStepDuration: Duration = .seconds(2)
    /// The most rollups (series-minutes plus app-build-minutes) a step holds before it commits, whatever
    /// ``maxStepDuration`` says: a bound on its memory (a rollup is a few hundred bytes plus its HyperLogLog, at most
    /// 4 KB, so by those sizes 100,000 stay under about 450 MB even with every sketch dense; not measured at the
    /// bound) and on the rows one transaction writes. Default 100,000. A single poll is not cut: a step holds at
    /// least one.
    public var maxStepRollups = 100_000
    /// How long one poll waits for the first message; also bounds how long `stop()` waits. Default 500 ms.
    public var pollTimeout: Duration = .milliseconds(500)
    /// How often a caught-up partition's freshness is written without records; default 5 s.
    public var freshnessInterval: Duration = .seconds(5)
    /// The pause before committing a step again after a store error; default 1 s (doubling to 30 s).
    public var retryDelay: Duration = .seconds(1)
    /// The consumer's session timeout; default 10 s, so a crashed sink's partitions move on quickly.
    public var sessionTimeout: Duration = .seconds(10)
    /// Where messages the sink cannot use go (``DeadLetterFile``). nil only logs and counts them. Default nil; the
    /// CLI sets `flowmeter-dead-letters.jsonl`.
    public var deadLetterPath: String?
    /// Extra librdkafka consumer properties, applied last.
    public var consumerProperties: [String: String] = [:]

    /// A configuration for these brokers with the defaults.
    public init(bootstrapServers: [String]) {
        self.bootstrapServers = bootstrapServers
    }

    /// The defaults, with no brokers: where `flowmeter serve`'s in-process sink and the CLI's help read them.
    public static let defaults = RollupSinkConfiguration(bootstrapServers: [])
}
