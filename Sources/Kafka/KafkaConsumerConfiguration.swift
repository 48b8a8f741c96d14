/// How a `KafkaConsumer` joins its group and where it starts reading.
///
/// Offsets are committed only by `KafkaConsumer.commit()` (auto-commit is off), so a message counts as consumed once
/// the caller has processed it: at-least-once, duplicates absorbed downstream by event id.
public struct KafkaConsumerConfiguration: Sendable, Hashable {
    /// Where a group with no committed offset starts reading (`auto.offset.reset`).
    public enum OffsetReset: String, Sendable, Hashable {
        /// The oldest message the partition still holds.
        case earliest
        /// Only messages produced after the consumer joins.
        case latest
    }

    /// `host:port` of the brokers to bootstrap from (`bootstrap.servers`); must not be empty.
    public var bootstrapServers: [String]
    /// The consumer group (`group.id`): consumers in one group share the partitions.
    public var groupID: String
    /// The client id brokers see (`client.id`). Default `flowmeter`.
    public var clientID: String = "flowmeter"
    /// `auto.offset.reset`. Default `.earliest`, so a new group reads everything already in the topic.
    public var offsetReset: OffsetReset = .earliest
    /// Whether librdkafka commits offsets on its own timer (`enable.auto.commit`). Default `false`: call `commit()`
    /// after processing.
    public var isAutoCommitEnabled: Bool = false
    /// How long the group waits for a silent consumer before rebalancing (`session.timeout.ms`). Default 45 s.
    public var sessionTimeout: Duration = .seconds(45)
    /// Extra librdkafka properties, applied last so they override any key above.
    public var additionalProperties: [String: String] = [:]

    /// Makes a configuration with the defaults for the given brokers and group.
    public init(bootstrapServers: [String], groupID: String) {
        self.bootstrapServers = bootstrapServers
        self.groupID = groupID
    }

    /// Renders the configuration to librdkafka's keys and values: the single source of what the consumer sets.
    public func librdkafkaProperties() -> [String: String] {
        var properties: [String: String] = [
            "bootstrap.servers": bootstrapServers.joined(separator: ","),
            "group.id": groupID,
            "client.id": clientID,
            "auto.offset.reset": offsetReset.rawValue,
            "enable.auto.commit": String(isAutoCommitEnabled),
            "session.timeout.ms": String(sessionTimeout.kafkaMilliseconds),
        ]
        properties.merge(additionalProperties) { _, extra in extra }
        return properties
    }
}
