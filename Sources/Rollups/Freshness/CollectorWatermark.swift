public import FlowmeterModels

/// A collector's heartbeat on one partition of `flowmeter.rollups.v1`: every partial rollup it had received by
/// `completeUpTo` is on this partition before this message.
///
/// A collector sends one to every partition with its flushes, carrying the drain time of its newest flush whose
/// messages all have a delivery report that says persisted (and no older one is waiting for a retry). A sink that
/// applies the messages of a partition in order and records the watermark after them therefore knows that the store
/// holds everything this collector had received by then, on this partition; over every partition, for the whole
/// collector. A collector that stops cleanly sends a last one with `isStopped`, so it is not read as behind.
public struct CollectorWatermark: Sendable, Hashable {
    /// The collector id (the `collector` of its partial rollups).
    public var collector: String
    /// The partition it describes.
    public var partition: Int
    /// How many partitions the rollups topic had when it was sent: the collector is complete once every one of
    /// `0..<partitions` holds a watermark.
    public var partitions: Int
    /// Everything the collector had received before this instant is on the partition before this message.
    public var completeUpTo: Timestamp
    /// Whether the collector sent it at a clean shutdown, after its final flush.
    public var isStopped: Bool

    /// Creates a watermark.
    public init(collector: String, partition: Int, partitions: Int, completeUpTo: Timestamp, isStopped: Bool = false) {
        self.collector = collector
        self.partition = partition
        self.partitions = partitions
        self.completeUpTo = completeUpTo
        self.isStopped = isStopped
    }

    /// The most partitions a watermark may name; more is treated as a bad message.
    public static let maxPartitions = 100_000

    /// Whether `self` replaces `stored` for the same collector and partition: the newer `completeUpTo` wins, and at
    /// the same instant a stop wins over a heartbeat.
    public func supersedes(_ stored: CollectorWatermark) -> Bool {
        completeUpTo != stored.completeUpTo ? completeUpTo > stored.completeUpTo : isStopped && !stored.isStopped
    }
}
