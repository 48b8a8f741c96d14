/// Running totals of a ``RollupSink`` since it was made.
public struct RollupSinkCounters: Sendable, Hashable {
    /// Batch records counted into the store (a split batch's parts each count).
    public var applied: Int = 0
    /// Copies of batches counted before (retries through any collector, replays), skipped.
    public var duplicates: Int = 0
    /// Events of the counted batch records.
    public var events: Int = 0
    /// Counted batches forgotten before their dedupe horizon had passed, to keep the sink within
    /// ``RollupSinkConfiguration/dedupeMaxEntries``: a copy of one of them would be counted again.
    public var dedupeEvicted: Int = 0
    /// Batches counted in a stretch of log time whose keys had been forgotten early (see ``dedupeEvicted``): had one
    /// been a copy, it was counted twice. 0 while the bound is not reached.
    public var dedupeUnchecked: Int = 0
    /// Messages that were not a valid batch record, deploy marker or manifest; counted and skipped.
    public var badMessages: Int = 0
    /// Messages the store refused for good (not retriable), skipped; dead-lettered.
    public var refusedMessages: Int = 0
    /// Messages written to the dead-letter file (bad and refused ones).
    public var deadLetters: Int = 0
    /// Deploy markers stored from the deploys topic.
    public var deploys: Int = 0
    /// Capability manifests stored from the manifests topic.
    public var manifests: Int = 0
    /// Partition steps committed to the store (with records, or freshness alone).
    public var batches: Int = 0
    /// Polls whose batch records were counted in a committed step: more than the steps' transactions while steps
    /// span polls (the sink is behind; ``RollupSinkConfiguration/maxStepDuration``).
    public var stepPolls: Int = 0
    /// Steps refused because another sink had moved the partition's stored offset on (a rebalance).
    public var fenced: Int = 0
    /// Seeks to the offset the store holds (on taking a partition, after a fence).
    public var seeks: Int = 0
    /// Kafka offset commits that succeeded (a hint for the group; the store's offsets are the ones used).
    public var commits: Int = 0
    /// Store or commit attempts that failed (each failed step is committed again).
    public var errors: Int = 0
    /// Failed store attempts by kind (``SinkStall/kind(of:)``), and failed dead-letter writes as `dead_letters`.
    public var storeErrors: [String: Int] = [:]
    /// Seconds between the newest counted record's Kafka timestamp and when it was counted: a cheap lag figure.
    public var lagSeconds: Double = 0

    /// Zero totals.
    public init() {}

    /// Adds what a committed step of `partitionSteps` partitions did.
    mutating func addCommitted(_ outcome: PartitionSteps.Outcome, partitionSteps: Int) {
        applied += outcome.counted
        duplicates += outcome.duplicates
        events += outcome.events
        dedupeEvicted += outcome.evicted
        dedupeUnchecked += outcome.unchecked
        badMessages += outcome.bad
        batches += partitionSteps
        stepPolls += outcome.adds
    }
}
