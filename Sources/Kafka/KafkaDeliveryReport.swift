import FlowmeterWire

/// The final word on one produced message: where it landed, or why it did not.
public struct KafkaDeliveryReport: Sendable {
    /// The message's position in its batch (0 for `send`), in the order it was appended.
    public var index: Int
    /// Whether the broker has the message.
    public var persistence: KafkaPersistenceStatus
    /// The failure, or `nil` when the message was persisted.
    public var error: KafkaError?
    /// The partition written to, or -1 when none was chosen.
    public var partition: Int
    /// The message's offset in the partition, or -1 when unknown (not persisted).
    public var offset: Int64
    /// The time from enqueue to this report, in nanoseconds of `MonotonicClock`.
    public var latencyNanoseconds: Int64

    /// The time from enqueue to this report.
    public var latency: Duration { .nanoseconds(latencyNanoseconds) }
}
