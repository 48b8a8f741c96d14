/// How fresh a store is, as it records it: the newest watermark of every collector on every partition, and what
/// retention removed.
///
/// Read it with ``RollupReader/freshness()``; ``FreshnessAssessment`` judges it against a clock.
public struct StoreFreshness: Sendable, Hashable {
    /// The newest watermark per collector and partition, ordered by collector, then partition.
    public var watermarks: [CollectorWatermark]
    /// What retention removed.
    public var retention: RetentionHorizon

    /// Creates a record.
    public init(watermarks: [CollectorWatermark] = [], retention: RetentionHorizon = RetentionHorizon()) {
        self.watermarks = watermarks
        self.retention = retention
    }
}
