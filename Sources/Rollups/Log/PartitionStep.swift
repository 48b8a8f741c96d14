public import FlowmeterModels

/// What a sink commits for one partition of `flowmeter.batches.v1` in one store transaction: the rollups built from
/// the batches it read, the batches it counted (for the dedupe horizon), and the partition's next offset.
///
/// The store applies a step only when the partition's stored offset is still ``startOffset`` (nothing stored when
/// nil): a sink that lost the partition in a rebalance and writes late is fenced off (``RollupStore`` throws), so a
/// batch is never counted by two sinks, nor twice by one.
public struct PartitionStep: Sendable {
    /// The topic read.
    public var topic: String
    /// The partition read.
    public var partition: Int
    /// How many partitions the topic has (for freshness: every one must report).
    public var partitions: Int
    /// The offset stored for the partition when the step began; nil when the store held none.
    public var startOffset: Int64?
    /// The offset of the first record not read yet, stored by the step.
    public var nextOffset: Int64
    /// The series rollups to merge.
    public var series: [SeriesRollup]
    /// The version rollups to merge.
    public var versions: [VersionRollup]
    /// The batches the step counted, remembered for the dedupe horizon.
    public var counted: [CountedBatch]
    /// Batches counted before this instant (epoch seconds of their `receivedAt`) are forgotten.
    public var forgetBefore: Int64
    /// Every record appended to the partition before this instant had been read by the step; nil when unknown (the
    /// partition's end was not known, or the sink is behind).
    public var completeUpTo: Timestamp?

    /// Creates a step.
    public init(
        topic: String, partition: Int, partitions: Int, startOffset: Int64?, nextOffset: Int64,
        series: [SeriesRollup] = [], versions: [VersionRollup] = [], counted: [CountedBatch] = [],
        forgetBefore: Int64 = 0, completeUpTo: Timestamp? = nil
    ) {
        self.topic = topic
        self.partition = partition
        self.partitions = partitions
        self.startOffset = startOffset
        self.nextOffset = nextOffset
        self.series = series
        self.versions = versions
        self.counted = counted
        self.forgetBefore = forgetBefore
        self.completeUpTo = completeUpTo
    }
}

/// A batch (or one part of a split batch) a sink counted: its dedupe key and when a collector received it.
public struct CountedBatch: Sendable, Hashable {
    /// The batch's dedupe key (``BatchKey``), 32 hex digits.
    public var key: String
    /// The batch's `receivedAt`, epoch seconds: the dedupe horizon is measured in the log's time.
    public var receivedAt: Int64

    /// Creates a record.
    public init(key: String, receivedAt: Int64) {
        self.key = key
        self.receivedAt = receivedAt
    }
}

/// Where a partition stands in a store: its next offset and the batches counted within the horizon.
public struct PartitionPosition: Sendable, Hashable {
    /// The offset of the first record not yet counted; nil when the store holds none for the partition.
    public var nextOffset: Int64?
    /// The counted batches the store remembers for the partition.
    public var counted: [CountedBatch]

    /// Creates a position.
    public init(nextOffset: Int64?, counted: [CountedBatch] = []) {
        self.nextOffset = nextOffset
        self.counted = counted
    }
}

/// A step was refused because the partition's stored offset had moved on: another sink owns the partition now.
public struct PartitionFenced: Error, Sendable, Hashable {
    /// The partition whose step was refused (of a commit of several partitions, the first refused).
    public var partition: Int
    /// The offset the step began from.
    public var expected: Int64?
    /// The offset the store holds.
    public var stored: Int64?

    /// Creates the error.
    public init(partition: Int, expected: Int64?, stored: Int64?) {
        self.partition = partition
        self.expected = expected
        self.stored = stored
    }
}
