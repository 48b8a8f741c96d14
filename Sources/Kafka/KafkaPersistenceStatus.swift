/// Whether a broker has written a message, as librdkafka's `rd_kafka_message_status` tells it.
public enum KafkaPersistenceStatus: Sendable, Hashable {
    /// The message never reached a broker: producing it again is safe and cannot duplicate it.
    case notPersisted
    /// The message may have been written (a request timed out or a connection dropped mid-request): producing it
    /// again is safe but may duplicate it.
    case possiblyPersisted
    /// The broker acknowledged the message: it is durable according to the producer's `acks`.
    case persisted
}
