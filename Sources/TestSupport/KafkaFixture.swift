import Foundation
public import Kafka

/// A mock Kafka cluster with Flowmeter's topics, and helpers to produce to it and read it back in tests.
///
/// Each fixture starts its own cluster on loopback ports, so tests running in parallel do not see each other's
/// messages. Reading helpers run the blocking consumer on their own thread and give up at their timeout.
public final class KafkaFixture: Sendable {
    /// A plain topic for producer and consumer tests (an earlier version's one message per event).
    public static let eventsTopic = "flowmeter.events.v1"
    /// The batches topic: one record per accepted batch, the log the sinks build the store from.
    public static let batchesTopic = "flowmeter.batches.v1"
    /// A second plain topic for producer and consumer tests (an earlier version's partial rollups).
    public static let rollupsTopic = "flowmeter.rollups.v1"
    /// Spike and ungated-type alerts.
    public static let alertsTopic = "flowmeter.alerts.v1"
    /// Deploy markers.
    public static let deploysTopic = "flowmeter.deploys.v1"
    /// Capability manifests.
    public static let manifestsTopic = "flowmeter.manifests.v1"
    /// The topics created in every fixture.
    public static let topics = [batchesTopic, eventsTopic, rollupsTopic, alertsTopic, deploysTopic, manifestsTopic]

    /// The cluster, for fault injection.
    public let cluster: KafkaMockCluster

    /// Starts a cluster of `brokers` brokers with the Flowmeter topics, each with `partitions` partitions.
    public init(brokers: Int = 3, partitions: Int = 3) throws {
        cluster = try KafkaMockCluster(brokers: brokers)
        for topic in Self.topics {
            try cluster.createTopic(topic, partitions: partitions, replicationFactor: min(brokers, 3))
        }
    }

    /// The cluster's bootstrap servers.
    public var bootstrapServers: [String] { cluster.bootstrapServers }

    /// The producer configuration tests start from: Flowmeter's defaults with a 5 ms linger to keep tests quick.
    public func producerConfiguration() -> KafkaProducerConfiguration {
        var configuration = KafkaProducerConfiguration(bootstrapServers: bootstrapServers)
        configuration.linger = .milliseconds(5)
        configuration.statisticsInterval = .zero
        return configuration
    }

    /// Makes a producer for the cluster, after `configure` has adjusted the test configuration.
    public func makeProducer(
        _ configure: (inout KafkaProducerConfiguration) -> Void = { _ in },
        deliveryObserver: (@Sendable (KafkaDeliveryReport) -> Void)? = nil
    ) throws -> KafkaProducer {
        var configuration = producerConfiguration()
        configure(&configuration)
        return try KafkaProducer(configuration: configuration, deliveryObserver: deliveryObserver)
    }

    /// Makes a consumer subscribed to `topics`; without a `groupID` it joins a fresh group, so it reads from the
    /// beginning.
    public func makeConsumer(
        topics: [String],
        groupID: String? = nil,
        _ configure: (inout KafkaConsumerConfiguration) -> Void = { _ in }
    ) throws -> KafkaConsumer {
        var configuration = KafkaConsumerConfiguration(
            bootstrapServers: bootstrapServers, groupID: groupID ?? "test-\(UUID().uuidString)")
        // A short session lets a group whose last member vanished take a new one quickly.
        configuration.sessionTimeout = .seconds(6)
        configure(&configuration)
        let consumer = try KafkaConsumer(configuration: configuration)
        try consumer.subscribe(topics: topics)
        return consumer
    }

    /// Reads `topic` from the beginning until `count` messages arrived or `timeout` passed; returns what was read.
    ///
    /// After reaching `count` it keeps reading for `settle` more, to catch duplicates that arrive late.
    public func consumeAll(
        topic: String,
        expecting count: Int,
        timeout: Duration = Eventually.hangGuard,
        settle: Duration = .zero
    ) async throws -> [KafkaConsumerMessage] {
        try await consume(topic: topic, timeout: timeout, settle: settle) { $0.count >= count }
    }

    /// Reads `topic` from the beginning until `isDone` says so or `timeout` passed; returns what was read.
    ///
    /// `timeout` is a hang guard for a reader waiting for messages it knows are coming: leave it at its default.
    public func consume(
        topic: String,
        timeout: Duration = Eventually.hangGuard,
        settle: Duration = .zero,
        until isDone: @escaping @Sendable ([KafkaConsumerMessage]) -> Bool
    ) async throws -> [KafkaConsumerMessage] {
        let consumer = try makeConsumer(topics: [topic])
        return try await Self.onThread {
            defer { consumer.close() }
            var messages: [KafkaConsumerMessage] = []
            let deadline = ContinuousClock.now + timeout
            while !isDone(messages) && ContinuousClock.now < deadline {
                messages += try consumer.poll(maxMessages: 10_000, timeout: .milliseconds(200))
            }
            let settled = ContinuousClock.now + settle
            while ContinuousClock.now < settled {
                messages += try consumer.poll(maxMessages: 10_000, timeout: .milliseconds(100))
            }
            return messages
        }
    }

    // The consumer blocks, so it gets a thread of its own instead of one from the cooperative pool.
    private static func onThread<Value: Sendable>(
        _ work: @escaping @Sendable () throws -> Value
    ) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Result { try work() }) }
            thread.name = "kafka-fixture-consumer"
            thread.start()
        }
    }
}
