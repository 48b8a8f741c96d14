/// Running totals of a ``RollupSink`` since it was made.
public struct RollupSinkCounters: Sendable, Hashable {
    /// Partial rollups merged into the store.
    public var applied: Int = 0
    /// Partial rollups skipped because their id was applied before (replays, duplicated deliveries).
    public var duplicates: Int = 0
    /// Messages that were not a valid partial rollup, deploy marker or manifest; counted and skipped.
    public var badMessages: Int = 0
    /// Messages the store refused for good (not retriable), applied alone and skipped; dead-lettered.
    public var refusedMessages: Int = 0
    /// Messages written to the dead-letter file (bad and refused ones).
    public var deadLetters: Int = 0
    /// Collector watermarks recorded (``CollectorWatermark``).
    public var watermarks: Int = 0
    /// Deploy markers stored from the deploys topic.
    public var deploys: Int = 0
    /// Capability manifests stored from the manifests topic.
    public var manifests: Int = 0
    /// Poll batches applied to the store.
    public var batches: Int = 0
    /// Offset commits that succeeded.
    public var commits: Int = 0
    /// Store or commit attempts that failed (each failed batch is applied again before its offsets are committed).
    public var errors: Int = 0
    /// Seconds between the newest applied message's Kafka timestamp and when it was applied: a cheap lag figure.
    public var lagSeconds: Double = 0

    /// Zero totals.
    public init() {}
}
