/// What became of a batch: how many messages were persisted and which ones failed.
///
/// `persisted + failures.count == enqueued` always holds. Failures keep their index in the batch so the caller can
/// produce exactly those messages again (when `error.isRetriable`) or set them aside.
public struct KafkaBatchOutcome: Sendable {
    /// How many messages the batch put on the producer's queue.
    public var enqueued: Int
    /// How many of them the brokers acknowledged.
    public var persisted: Int
    /// The messages that were not persisted, each with its error and batch index.
    public var failures: [KafkaDeliveryReport]
    /// Every report, in the order they arrived; empty unless the batch asked for them (`recordsReports`).
    public var reports: [KafkaDeliveryReport]

    /// Whether every enqueued message was persisted.
    public var isFullyPersisted: Bool { failures.isEmpty }
}
