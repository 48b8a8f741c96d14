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
    /// Header lists built for messages since the start (each is reused once its message is reported, so this stays
    /// near the most messages ever in flight at once; steady growth would mean lists are not coming back).
    public var headerListsBuilt: Int = 0
    /// Header lists kept for reuse now.
    public var headerListsKept: Int = 0
}
