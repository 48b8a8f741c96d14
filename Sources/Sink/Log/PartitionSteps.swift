public import FlowmeterModels
public import RollupStore
public import Rollups

/// Builds and commits the steps of the partitions one sink holds: per step, the batch records of each partition in
/// offset order are deduped, aggregated into minute rollups and committed with the partitions' next offsets and
/// dedupe state in one store transaction (``RollupStore/commit(_:)``), each fenced by the offset its part of the step
/// began from. A step is built from one call (``makeSteps(_:partitions:)``) or from several (``add(_:partitions:)``,
/// one a poll, then ``finishStep()``, or ``abandonStep()`` when it will not be committed); meanwhile it holds its
/// rollups, counted keys and offsets, not the records.
///
/// Kafka-free, so the Kafka sink and the in-process sink of `--kafka none` share it. Not thread-safe: one thread
/// (the sink's) calls it. A partition's state is loaded from the store the first time it is used, and dropped when
/// a commit is fenced (another sink took the partition over) or the caller says so; it is loaded again next time.
///
/// The dedupe memory of every partition held is bounded together: at most `maxEntries` counted batches are
/// remembered over all of them. Past the bound the oldest remembered batches by `receivedAt`, whichever partition
/// holds them, are forgotten first (a whole second at a time, as the store forgets them), which shortens that
/// partition's horizon; ``Outcome/evicted`` counts them, and ``Outcome/unchecked`` counts batches counted in a
/// stretch forgotten early, where a copy could no longer be recognised (docs/sink.md).
public final class PartitionSteps {
    /// What one step did, for the sink's counters.
    public struct Outcome: Sendable, Hashable {
        /// Records read.
        public var records = 0
        /// Batch records counted.
        public var counted = 0
        /// Copies of batches counted before, skipped.
        public var duplicates = 0
        /// Events counted (by record, not by `count`).
        public var events = 0
        /// Records that are not batch records, skipped.
        public var bad = 0
        /// Counted batches forgotten before their horizon had passed, to keep the sink within its dedupe bound
        /// (of any partition held, during this step).
        public var evicted = 0
        /// Batches counted although their `receivedAt` lies in a stretch whose keys were forgotten early: a copy of
        /// one counted there before would not have been recognised. 0 unless the dedupe bound was reached.
        public var unchecked = 0
        /// The ``add(_:partitions:)`` calls the step took (the sink's polls); 1 for ``makeSteps(_:partitions:)``.
        public var adds = 0
    }

    /// A record that could not be used, with why.
    public struct BadRecord: Sendable {
        /// Its offset.
        public var offset: Int64
        /// Why.
        public var reason: String
    }

    /// The topic read.
    public let topic: String
    private let store: any SinkStore
    private let horizonSeconds: Int64
    private let maxEntries: Int
    private var states: [Int: State] = [:]
    /// The counted batches remembered over every partition held: at most ``maxEntries`` after every admit.
    public private(set) var rememberedBatches = 0
    /// Kept across steps, so its interner keeps the values every record repeats.
    private var decoder = BatchRecordDecoder()

    private struct State {
        var stored: Int64?
        var dedupe: DedupeWindow
    }

    /// Steps for `topic` into `store`, remembering counted batches for `horizon`, at most `maxEntries` over every
    /// partition held.
    public init(topic: String, store: any SinkStore, horizon: Duration, maxEntries: Int) {
        self.topic = topic
        self.store = store
        self.horizonSeconds = horizon.components.seconds
        self.maxEntries = max(1, maxEntries)
    }

    /// The partition's stored next offset (nil when the store holds none), loading its state when not held.
    public func storedOffset(partition: Int) throws -> Int64? {
        try state(partition).stored
    }

    /// Whether the partition's state is held.
    public func holds(partition: Int) -> Bool { states[partition] != nil }

    /// Forgets the partition's state; the next use loads it from the store. Not for a partition of the open step,
    /// whose state only ``abandonStep()`` forgets.
    public func drop(partition: Int) {
        if let state = states.removeValue(forKey: partition) { rememberedBatches -= state.dedupe.count }
    }

    /// How many counted batches are remembered for `partition`; 0 when it is not held.
    public func rememberedBatches(partition: Int) -> Int { states[partition]?.dedupe.count ?? 0 }

    private func state(_ partition: Int) throws -> State {
        if let state = states[partition] { return state }
        let position = try store.position(topic: topic, partition: partition)
        var state = State(
            stored: position.nextOffset,
            dedupe: DedupeWindow(horizonSeconds: horizonSeconds, maxEntries: maxEntries, counted: position.counted))
        rememberedBatches += state.dedupe.count
        _ = evictOverBound(current: &state.dedupe)
        states[partition] = state
        return state
    }

    /// Forgets the oldest remembered batches, over `current` (the window of the partition being stepped, held outside
    /// ``states`` meanwhile) and every partition held, until at most ``maxEntries`` are remembered; returns how many
    /// were forgotten before their horizon.
    private func evictOverBound(current: inout DedupeWindow) -> Int {
        var evicted = 0
        while rememberedBatches > maxEntries {
            var oldestPartition: Int?
            var oldest = current.oldestReceivedAt ?? .max
            for (partition, state) in states {
                if let received = state.dedupe.oldestReceivedAt, received < oldest {
                    oldest = received
                    oldestPartition = partition
                }
            }
            if let partition = oldestPartition {
                let before = states[partition]!.dedupe.evicted
                rememberedBatches -= states[partition]!.dedupe.forgetOldest()
                evicted += states[partition]!.dedupe.evicted - before
            } else {
                let before = current.evicted
                let forgotten = current.forgetOldest()
                guard forgotten > 0 else { break }
                rememberedBatches -= forgotten
                evicted += current.evicted - before
            }
        }
        return evicted
    }

    /// The records of one partition for a step: in offset order, the first at or after the stored offset.
    public struct Input: Sendable {
        /// The partition read.
        public var partition: Int
        /// Its records, in offset order.
        public var records: [(offset: Int64, value: [UInt8])]
        /// When the step reaches the partition's end as the caller knows it, the instant it knew that (the
        /// partition's freshness); nil when behind or unknown.
        public var caughtUpAt: Timestamp?

        /// Creates an input.
        public init(partition: Int, records: [(offset: Int64, value: [UInt8])], caughtUpAt: Timestamp?) {
            self.partition = partition
            self.records = records
            self.caughtUpAt = caughtUpAt
        }
    }

    /// Builds the step for `records` (one partition's, in offset order, the first at or after the stored offset):
    /// copies skipped, the rest aggregated. The partition's dedupe state moves on with it; when the step is not
    /// committed, ``drop(partition:)`` it.
    ///
    /// - Parameters:
    ///   - partitions: the topic's partition count.
    ///   - caughtUpAt: when the step reaches the partition's end as the caller knows it, the instant it knew that
    ///     (the partition's freshness); nil when behind or unknown.
    public func makeStep(
        partition: Int, partitions: Int, records: [(offset: Int64, value: [UInt8])], caughtUpAt: Timestamp?
    ) throws -> (step: PartitionStep, outcome: Outcome, bad: [BadRecord]) {
        let made = try makeSteps(
            [Input(partition: partition, records: records, caughtUpAt: caughtUpAt)], partitions: partitions)
        return (made.steps[0], made.outcome, made.bad.map(\.record))
    }

    /// Builds the steps of several partitions (``makeStep(partition:partitions:records:caughtUpAt:)`` for each) to
    /// be committed together (``commit(_:)-([PartitionStep])``): ``add(_:partitions:)`` then ``finishStep()``. One
    /// aggregator counts every partition's batches, so a series-minute the partitions share becomes one rollup,
    /// carried by the first step (the others carry their offsets and counted batches only). Every partition's dedupe
    /// state moves on; when the steps are not committed, ``drop(partition:)`` each.
    public func makeSteps(
        _ inputs: [Input], partitions: Int
    ) throws -> (steps: [PartitionStep], outcome: Outcome, bad: [(partition: Int, record: BadRecord)]) {
        precondition(!hasOpenStep, "makeSteps with a step open")
        let bad = try add(inputs, partitions: partitions)
        let finished = finishStep()
        return (finished.steps, finished.outcome, bad)
    }

    /// Where one partition of the open step stands.
    private struct OpenPartition {
        /// The stored offset when the step took its first records: what the step is fenced by.
        var startOffset: Int64?
        /// The offset after the last record added.
        var nextOffset: Int64
        var counted: [CountedBatch] = []
        var caughtUpAt: Timestamp?
    }

    /// The step being built; a new one (empty) once it is finished or abandoned.
    private struct OpenStep {
        /// The partitions it holds records of, and the order they joined in.
        var partitions: [Int: OpenPartition] = [:]
        var order: [Int] = []
        var aggregator: RollupAggregator?
        var outcome = Outcome()
        /// The topic's partition count, as the last add said.
        var partitionCount = 0
        /// When its first records were added.
        var openedAt: ContinuousClock.Instant?
    }
    private var open = OpenStep()

    /// Whether a step is open: records were added and not yet finished (``finishStep()``) or abandoned.
    public var hasOpenStep: Bool { !open.order.isEmpty }

    /// When the open step took its first records; nil when none is open.
    public var openedAt: ContinuousClock.Instant? { open.openedAt }

    /// The rollups (series-minutes plus app-build-minutes) the open step holds: its memory, and about the rows its
    /// commit writes.
    public var openRollups: Int { open.aggregator?.entryCount ?? 0 }

    /// The records the open step has read.
    public var openRecords: Int { open.outcome.records }

    /// Where `partition` is to be read from next: after the open step's last record of it, or the stored offset
    /// when the open step holds none (loading its state when not held).
    public func nextOffset(partition: Int) throws -> Int64? {
        if let part = open.partitions[partition] { return part.nextOffset }
        return try storedOffset(partition: partition)
    }

    /// Adds records to the open step (opening one when none is), each input one partition's records in offset
    /// order, the first at ``nextOffset(partition:)`` (or past it, after records retention removed): copies
    /// skipped, the rest aggregated. Returns the records that are not batch records, to be set aside before the step
    /// commits. Every partition's dedupe state moves on; a step that is not committed is ``abandonStep()``-ed.
    ///
    /// Throws only while loading a partition's state from the store, before anything is added.
    @discardableResult
    public func add(_ inputs: [Input], partitions: Int) throws -> [(partition: Int, record: BadRecord)] {
        for input in inputs { _ = try state(input.partition) }
        guard !inputs.isEmpty else { return [] }
        open.partitionCount = partitions
        if open.openedAt == nil { open.openedAt = .now }
        open.outcome.adds += 1
        let aggregator =
            open.aggregator
            ?? RollupAggregator(
                configuration: .init(collectorID: "sink", bootID: "0", shardCount: 1, maxEntries: 50_000_000))
        open.aggregator = aggregator
        var bad: [(partition: Int, record: BadRecord)] = []
        for input in inputs {
            let partition = input.partition
            // Out of the dictionaries while they change, so the window and the counted list are mutated in place.
            var state = states.removeValue(forKey: partition)!
            defer { states[partition] = state }
            if open.partitions[partition] == nil { open.order.append(partition) }
            var part =
                open.partitions.removeValue(forKey: partition)
                ?? OpenPartition(startOffset: state.stored, nextOffset: state.stored ?? 0)
            defer { open.partitions[partition] = part }
            if input.caughtUpAt != nil || !input.records.isEmpty { part.caughtUpAt = input.caughtUpAt }
            for record in input.records {
                open.outcome.records += 1
                part.nextOffset = record.offset + 1
                let batch: CompactBatchRecord
                do {
                    batch = try decoder.decode(record.value)
                } catch {
                    open.outcome.bad += 1
                    bad.append((partition, BadRecord(offset: record.offset, reason: error.message)))
                    continue
                }
                let key = batch.key
                let receivedAt = batch.receivedAt.secondsSinceEpoch
                let uncheckedBefore = state.dedupe.isForgottenEarly(receivedAt: receivedAt)
                let remembered = state.dedupe.count
                let evicted = state.dedupe.evicted
                guard state.dedupe.admit(key, receivedAt: receivedAt) else {
                    open.outcome.duplicates += 1
                    continue
                }
                if uncheckedBefore { open.outcome.unchecked += 1 }
                open.outcome.evicted += state.dedupe.evicted - evicted
                rememberedBatches += state.dedupe.count - remembered
                open.outcome.evicted += evictOverBound(current: &state.dedupe)
                part.counted.append(CountedBatch(key: key, receivedAt: receivedAt))
                open.outcome.counted += 1
                open.outcome.events += batch.table.count
                let isFirst = batch.part == 0
                aggregator.record(
                    batch.table, client: batch.client, decodes: isFirst ? batch.decodes : 0,
                    installHash: batch.installHash, receivedAt: batch.receivedAt, droppedEvents: batch.dropped,
                    clientDiscarded: isFirst ? batch.clientReport?.totalEvents ?? 0 : 0, isContinuation: !isFirst)
            }
        }
        return bad
    }

    /// Ends the open step: its steps, one per partition it read (the first carrying every rollup), to be committed
    /// together (``commit(_:)-([PartitionStep])``), and what they did. Empty when no step is open.
    public func finishStep() -> (steps: [PartitionStep], outcome: Outcome) {
        let finished = open
        open = OpenStep()
        var steps: [PartitionStep] = []
        for partition in finished.order {
            guard var part = finished.partitions[partition] else { continue }
            // A key counted twice in one step (its first copy past the horizon) is stored once, with its later time.
            var latest: [String: Int] = [:]
            for (index, batch) in part.counted.enumerated() { latest[batch.key] = index }
            if latest.count < part.counted.count {
                part.counted = part.counted.indices.filter { latest[part.counted[$0].key] == $0 }.map {
                    part.counted[$0]
                }
            }
            let forgetBefore = states[partition]?.dedupe.forgetBefore ?? .min
            steps.append(
                PartitionStep(
                    topic: topic, partition: partition, partitions: finished.partitionCount,
                    startOffset: part.startOffset,
                    nextOffset: part.nextOffset, counted: part.counted,
                    forgetBefore: forgetBefore == .min ? 0 : forgetBefore, completeUpTo: part.caughtUpAt))
        }
        guard !steps.isEmpty, let aggregator = finished.aggregator else { return (steps, finished.outcome) }
        for partial in aggregator.drain() {
            switch partial.rollup {
            case .series(let rollup): steps[0].series.append(rollup)
            case .version(let rollup): steps[0].versions.append(rollup)
            }
        }
        return (steps, finished.outcome)
    }

    /// Abandons the open step (nothing of it will be committed): forgets it and the state of every partition it
    /// read, whose dedupe state moved on with it. Returns where each of those partitions is to be read from again:
    /// the offset its part of the step began from (its beginning when nil).
    @discardableResult
    public func abandonStep() -> [Int: Int64?] {
        let abandoned = open
        open = OpenStep()
        for partition in abandoned.order { drop(partition: partition) }
        return abandoned.partitions.mapValues(\.startOffset)
    }

    /// Commits `step` (made by ``makeStep(partition:partitions:records:caughtUpAt:)``): ``commit(_:)-([PartitionStep])``
    /// of one.
    public func commit(_ step: PartitionStep) throws { try commit([step]) }

    /// Commits `steps` (made by ``makeSteps(_:partitions:)``) in one store transaction and moves each partition's
    /// stored offset on. On any error nothing is committed and every partition's state is dropped (the next use
    /// loads it from the store), since each moved on with the steps.
    public func commit(_ steps: [PartitionStep]) throws {
        do {
            try store.commit(steps)
        } catch {
            for step in steps { drop(partition: step.partition) }
            throw error
        }
        for step in steps { states[step.partition]?.stored = step.nextOffset }
    }
}
