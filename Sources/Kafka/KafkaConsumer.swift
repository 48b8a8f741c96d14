import Synchronization

/// Reads messages from Kafka as a member of a consumer group, committing offsets only when told.
///
/// Every method blocks: call them from a dedicated thread, never from the cooperative pool (an `async` task). The
/// intended loop is `poll`, process, `commit`, so a crash replays at most the uncommitted messages (at-least-once).
public final class KafkaConsumer: Sendable {
    /// The configuration the consumer was made with.
    public let configuration: KafkaConsumerConfiguration
    // Nil once closed: dropping the last reference destroys the handle, so its broker threads stop with `close()`
    // instead of lingering (and logging disconnects) until the consumer object goes away. A poll in progress keeps
    // its own reference until it returns.
    private let current: Mutex<RDKafkaClient?>
    private let isClosed = Atomic<Bool>(false)
    private let connection = ConnectionWatch()

    /// Makes a consumer; throws when librdkafka rejects the configuration. It reads nothing until `subscribe`.
    public init(configuration: KafkaConsumerConfiguration) throws {
        self.configuration = configuration
        let client = try RDKafkaClient.make(
            .consumer, properties: configuration.librdkafkaProperties(), connection: connection)
        client.redirectEventsToConsumer()
        current = Mutex(client)
    }

    /// The live handle, or `shutDown` after `close()`.
    private func client() throws -> RDKafkaClient {
        guard let client = current.withLock({ $0 }) else {
            throw KafkaError(.shutDown, "the consumer is closed", isRetriable: false)
        }
        return client
    }

    deinit {
        close()
    }

    /// Subscribes to topics; partitions are assigned as the group (re)balances during `poll`.
    public func subscribe(topics: [String]) throws {
        try client().subscribe(topics: topics)
    }

    /// Returns up to `maxMessages` messages, waiting up to `timeout` for the first and then up to `gathering` more
    /// for the rest; an empty array when none came. With `gathering` zero it returns what had arrived with the first.
    ///
    /// Blocks the calling thread. Throws for permanent errors such as an unauthorized topic; transient ones (a broker
    /// away) are retried by librdkafka and do not surface. Throws `shutDown` after `close()`.
    public func poll(
        maxMessages: Int = 500, timeout: Duration, gathering: Duration = .zero
    ) throws -> [KafkaConsumerMessage] {
        let client = try client()
        var messages: [KafkaConsumerMessage] = []
        var deadline = ContinuousClock.now + timeout
        while messages.count < maxMessages {
            let remaining = max(.zero, deadline - .now)
            let milliseconds = Int32(clamping: remaining.kafkaMilliseconds)
            if let message = try client.consumerPoll(milliseconds: milliseconds, connection: connection) {
                if messages.isEmpty { deadline = .now + gathering }
                messages.append(message)
            } else if ContinuousClock.now >= deadline {
                break
            }
        }
        return messages
    }

    /// Why the brokers cannot be reached now, from the errors `poll` skipped: a TLS handshake that failed, SASL
    /// credentials refused, dropped connections, every broker down (librdkafka's sentence in the reason); nil once a
    /// message arrives, and before anything failed.
    public var connectionProblem: KafkaError? {
        connection.current
    }

    /// Commits the offsets of every message returned by `poll` so far; blocks until the coordinator answers.
    public func commit() throws {
        try client().commitPolled()
    }

    /// Moves the position of an assigned partition to `offset`, so the next polls return its messages from there;
    /// waits up to `timeout`. Throws when the partition is not assigned to this member (any more).
    public func seek(topic: String, partition: Int, offset: Int64, timeout: Duration = .seconds(5)) throws {
        try client().seek(
            topic: topic, partition: partition, offset: offset,
            milliseconds: Int32(clamping: timeout.kafkaMilliseconds))
    }

    /// The partitions the group assigned to this member now.
    public func assignment() throws -> [(topic: String, partition: Int)] {
        try client().assignment()
    }

    /// The offsets of a partition's first and next-to-be-written message as the consumer's last fetch saw them;
    /// nil when it has not fetched the partition yet. Never waits.
    public func cachedWatermarks(topic: String, partition: Int) -> (low: Int64, high: Int64)? {
        (try? client())?.cachedWatermarks(topic: topic, partition: partition)
    }

    /// The offsets of a partition's first and next-to-be-written message, asked of its leader; waits up to `timeout`.
    public func watermarks(topic: String, partition: Int, timeout: Duration) throws -> (low: Int64, high: Int64) {
        try client().queryWatermarks(
            topic: topic, partition: partition, milliseconds: Int32(clamping: timeout.kafkaMilliseconds))
    }

    /// How many partitions `topic` has, from a metadata request that waits up to `timeout`.
    public func partitionCount(topic: String, timeout: Duration) throws -> Int {
        try client().partitionCount(topic: topic, milliseconds: Int32(clamping: timeout.kafkaMilliseconds))
    }

    /// Leaves the group (so its partitions move to other members at once) and stops the consumer; idempotent.
    public func close() {
        if !isClosed.exchange(true, ordering: .acquiringAndReleasing) {
            let client = current.withLock { $0 }
            client?.closeConsumer()
            current.withLock { $0 = nil }
        }
    }
}
