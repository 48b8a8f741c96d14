/// A snapshot of a producer's running totals, for metrics.
public struct KafkaProducerCounters: Sendable, Hashable {
    /// Messages whose delivery report said persisted.
    public var delivered: UInt64
    /// Messages whose delivery report was a failure (including purges on rebuild or shutdown).
    public var failed: UInt64
    /// Messages on the current handle not yet reported (`rd_kafka_outq_len`): queued, in flight, or awaiting a report.
    public var queueDepth: Int
    /// How many times a fatal error made the producer replace its librdkafka handle.
    public var rebuilds: UInt64
}
