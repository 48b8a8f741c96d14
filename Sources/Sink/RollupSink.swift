import FlowmeterModels
import Foundation
import Kafka
import Lifecycle
public import RollupStore
import Rollups
import Synchronization

/// Builds the store's rollups from `flowmeter.batches.v1`, exactly once, as a member of a consumer group (and
/// merges `flowmeter.deploys.v1` and `flowmeter.manifests.v1` into it).
///
/// Per poll (gathered for up to ``RollupSinkConfiguration/stepInterval``), the records of every partition polled
/// join one step (``PartitionSteps``), and a step goes on over the next polls while they come back full (the sink is
/// behind), up to ``RollupSinkConfiguration/maxStepDuration``: copies of batches counted within the dedupe horizon
/// are skipped, the rest aggregated into minute rollups, and the rollups, the counted batches and each partition's
/// next offset are written in one store transaction, each partition fenced by the offset its part of the step began
/// from. The
/// store's offsets are the ones that count: a partition the sink takes is read from the offset the store holds
/// (the sink seeks there when Kafka hands it another), and a step of a sink that lost its partition and writes late
/// is refused by the store. Kafka offsets are committed too, only as a hint for where a new member starts. A record
/// that is not a batch record is dead-lettered before the step commits, then skipped (its offset moves on with the
/// step); a store error retries the same step with backoff, so nothing moves while the store is away. A fenced step
/// reads every partition of it again, from the store's offsets.
///
/// A store that fails as a whole (``RollupStoreError/isStoreWide``: read-only after a failover, permission denied,
/// disk full, connection lost or stalled, SQLite I/O or corruption) is not a message's fault: nothing is
/// dead-lettered for it, no offset moves, ``stall`` says why (for `/readyz`), and the sink retries with a bounded
/// exponential backoff until the store is back. Only a message that fails to decode, or whose own data the store
/// refuses (``RollupStoreError/refusesData``), is dead-lettered; a dead letter that cannot be written stalls the sink
/// the same way, since skipping the message would then lose it unseen.
///
/// Blocking throughout: `run()` loops on the calling thread until `stop()`; `start()` runs that loop on a thread of
/// its own (`rollup-sink`). A store error retries the same batch with backoff, without polling further.
public final class RollupSink: Sendable {
    /// How serious a log line is.
    public enum LogLevel: String, Sendable {
        /// Something worth knowing, such as a store that came back.
        case info
        /// Skipped data or a retry.
        case warning
        /// A failure that needs attention.
        case error
    }

    /// Receives the sink's log lines: level, message and fields. Called from the sink's thread.
    public typealias Log = @Sendable (LogLevel, String, [String: String]) -> Void

    /// The configuration it was made with.
    public let configuration: RollupSinkConfiguration
    private let store: any SinkStore
    private let consumer: KafkaConsumer
    private let log: Log
    private let state = Mutex<RollupSinkCounters>(RollupSinkCounters())
    private let isStopping = Atomic<Bool>(false)
    private let isRunning = Atomic<Bool>(false)
    private let drainDeadline = Mutex<ContinuousClock.Instant?>(nil)
    private let hasConsumed = Atomic<Bool>(false)
    private let stopped = DispatchSemaphore(value: 0)
    /// Ends a store retry's pause early when the sink is asked to stop.
    private let pauseWakeup = Wakeup()
    private let deadLetters: DeadLetterFile?
    private let steps: Mutex<PartitionSteps>
    private let partitionCount = Mutex<(count: Int, checkedAt: ContinuousClock.Instant)?>(nil)
    private let lastFreshness = Mutex<ContinuousClock.Instant?>(nil)
    private let currentStall = Mutex<SinkStall?>(nil)
    private let progress = Mutex<[Int: PartitionProgress]>([:])
    /// The newest Kafka timestamp among the open step's records, for the lag figure once it commits.
    private let openStepNewest = Mutex<Date?>(nil)
    /// Seeks that failed (librdkafka timed out, or the partition was between states), by partition: tried again
    /// before every poll until they succeed or the partition is no longer assigned. Without this a partition whose
    /// seek failed after its last record was read would sit past records nobody counted until new ones arrived.
    private let pendingSeeks = Mutex<[Int: Int64?]>([:])
    /// Fault injection for tests: this many seeks fail as a timed-out one would.
    let seekFailuresToInject = Atomic<Int>(0)
    private let observeCommit: @Sendable (Duration) -> Void

    /// Where one partition stands: the next offset the store holds and the partition's end as last seen.
    public struct PartitionProgress: Sendable, Hashable {
        /// The next offset to count, as committed to the store.
        public var nextOffset: Int64
        /// The partition's high watermark when the step committed (the offset after its newest record).
        public var highWatermark: Int64

        /// Records written to the partition but not yet counted.
        public var lag: Int64 { max(0, highWatermark - nextOffset) }
    }

    /// Makes the consumer and subscribes to the topics; reads nothing until `run()` or `pollOnce()`.
    ///
    /// `observeCommit` is told how long each committed store transaction took (for a histogram), on the sink's
    /// thread.
    public init(
        configuration: RollupSinkConfiguration, store: any SinkStore, log: @escaping Log = { _, _, _ in },
        observeCommit: @escaping @Sendable (Duration) -> Void = { _ in }
    ) throws(SinkError) {
        self.configuration = configuration
        self.store = store
        self.log = log
        self.observeCommit = observeCommit
        self.deadLetters = configuration.deadLetterPath.map(DeadLetterFile.init(path:))
        self.steps = Mutex(
            PartitionSteps(
                topic: configuration.batchesTopic, store: store, horizon: configuration.dedupeHorizon,
                maxEntries: configuration.dedupeMaxEntries))
        var consumerConfiguration = KafkaConsumerConfiguration(
            bootstrapServers: configuration.bootstrapServers, groupID: configuration.groupID)
        consumerConfiguration.clientID = "flowmeter-sink"
        consumerConfiguration.offsetReset = .earliest
        consumerConfiguration.isAutoCommitEnabled = false
        consumerConfiguration.sessionTimeout = configuration.sessionTimeout
        consumerConfiguration.additionalProperties = configuration.consumerProperties
        do {
            consumer = try KafkaConsumer(configuration: consumerConfiguration)
            try consumer.subscribe(
                topics: [configuration.batchesTopic]
                    + [configuration.deploysTopic, configuration.manifestsTopic].compactMap { $0 })
        } catch {
            throw SinkError(.consumerFailed, "could not make the batches consumer: \(error)")
        }
    }

    deinit {
        consumer.close()
    }

    /// The totals so far.
    public var counters: RollupSinkCounters {
        state.withLock { $0 }
    }

    /// Why the sink makes no progress now, or nil while it does (or has not met a failure).
    public var stall: SinkStall? {
        currentStall.withLock { $0 }
    }

    /// Records read into the open step and not yet committed (0 when no step is open): a step spans polls while
    /// they come back full (``RollupSinkConfiguration/maxStepDuration``).
    public var openStepRecords: Int {
        steps.withLock { $0.openRecords }
    }

    /// The partitions of the batches topic this sink has committed steps for, with where each stands.
    public var partitionProgress: [Int: PartitionProgress] {
        progress.withLock { $0 }
    }

    /// Polls, builds and commits steps until `stop()`; then leaves the group. Throws only for permanent Kafka
    /// errors.
    public func run() throws(SinkError) {
        defer {
            consumer.close()
            isRunning.store(false, ordering: .releasing)
            stopped.signal()
        }
        isRunning.store(true, ordering: .releasing)
        while !isStopping.load(ordering: .acquiring) {
            _ = try pollOnce()
        }
        // Asked to drain: keep consuming until three polls in a row come back empty (caught up) or the deadline
        // passes. One empty poll is not proof on a loaded machine: a fetch of what a collector sent at its shutdown
        // can take longer than one poll's timeout. An empty poll before the first message may only mean the group
        // has not assigned partitions yet, so it does not count.
        var emptyPolls = 0
        while let deadline = drainDeadline.withLock({ $0 }), ContinuousClock.now < deadline {
            if try pollOnce(draining: true) > 0 {
                emptyPolls = 0
            } else if hasConsumed.load(ordering: .relaxed) {
                emptyPolls += 1
                if emptyPolls == 3 { break }
            }
        }
        // A step still open (stopped without draining) commits if the store takes it at once; else it is abandoned.
        endStep(draining: false)
    }

    /// Runs `run()` on a thread of its own; errors are logged.
    public func start() {
        isRunning.store(true, ordering: .releasing)
        startThread(named: "rollup-sink") { [self] in
            do {
                try run()
            } catch {
                log(.error, "rollup sink stopped", ["error": String(describing: error)])
            }
        }
    }

    /// Asks the loop to stop after the current poll (at most `pollTimeout`, or a store retry's pause) and, when it
    /// runs, waits up to `timeout` for it to leave the group. Idempotent.
    ///
    /// - Parameter draining: keep consuming for up to this long until three polls in a row find nothing new (once
    ///   the sink has received anything at all), so that what a collector in the same process sent at its shutdown
    ///   reaches the store.
    public func stop(draining: Duration = .zero, timeout: Duration = .seconds(30)) {
        if draining > .zero { drainDeadline.withLock { $0 = .now + draining } }
        guard !isStopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        pauseWakeup.wake()
        if isRunning.load(ordering: .acquiring) {
            let bound = max(timeout, draining + .seconds(5))
            _ = stopped.wait(timeout: .now() + .milliseconds(Int((bound / .milliseconds(1)).rounded())))
        } else {
            consumer.close()
        }
    }

    /// One turn of the loop: polls up to `maxBatch` messages, adds the batches topic's among them to the open step
    /// and commits it unless the poll was full (within ``RollupSinkConfiguration/maxStepDuration`` and
    /// ``RollupSinkConfiguration/maxStepRollups``), stores deploys and manifests, then (when `commit`) commits the
    /// Kafka offsets as a hint. Returns the messages polled.
    ///
    /// `commit: false` leaves Kafka's offsets where they were, as a sink killed right after the store transaction
    /// would; the next owner still starts from the store's offsets.
    @discardableResult
    public func pollOnce(commit: Bool = true) throws(SinkError) -> Int {
        try pollOnce(commit: commit, draining: false)
    }

    private func pollOnce(commit: Bool = true, draining: Bool) throws(SinkError) -> Int {
        retryPendingSeeks()
        let messages: [KafkaConsumerMessage]
        do {
            messages = try consumer.poll(
                maxMessages: configuration.maxBatch, timeout: configuration.pollTimeout,
                gathering: configuration.stepInterval)
        } catch {
            if isStopping.load(ordering: .acquiring) && !draining {
                endStep(draining: draining)
                return 0
            }
            throw SinkError(.kafkaFailed, "polling failed: \(error)")
        }
        if !messages.isEmpty { hasConsumed.store(true, ordering: .relaxed) }
        var byPartition: [Int: [KafkaConsumerMessage]] = [:]
        var others: [KafkaConsumerMessage] = []
        for message in messages {
            if message.topic == configuration.batchesTopic {
                byPartition[message.partition, default: []].append(message)
            } else {
                others.append(message)
            }
        }
        var isComplete = true
        if !byPartition.isEmpty {
            isComplete = add(byPartition.keys.sorted(), messages: byPartition, draining: draining)
        }
        if isComplete && isStepDue(pollWasFull: messages.count >= configuration.maxBatch, draining: draining) {
            isComplete = endStep(draining: draining)
        }
        if !others.isEmpty {
            if let batch = decode(others, draining: draining) {
                isComplete = applyWithRetry(batch, draining: draining) && isComplete
            } else {
                isComplete = false
            }
        }
        if isComplete && !steps.withLock({ $0.hasOpenStep }) { writeFreshnessIfDue() }
        // Kafka's offsets are only a hint for the batches topic (they may run ahead of an open step's), but the only
        // position of the deploys and manifests topics: a poll that stopped before storing everything commits none.
        if commit && isComplete && !messages.isEmpty {
            do {
                try consumer.commit()
                state.withLock { $0.commits += 1 }
            } catch {
                // Only a hint: the store's offsets decide where a partition is read from.
                log(.warning, "offset commit failed", ["error": String(describing: error)])
            }
        }
        return messages.count
    }

    /// Whether the open step is to commit after this poll: unless the poll came back full (the sink is behind, so a
    /// longer step divides the store's work over more records), within ``RollupSinkConfiguration/maxStepDuration``
    /// and ``RollupSinkConfiguration/maxStepRollups``, and while the sink is not stopping or draining.
    private func isStepDue(pollWasFull: Bool, draining: Bool) -> Bool {
        let (openedAt, rollups) = steps.withLock { ($0.openedAt, $0.openRollups) }
        guard let openedAt else { return false }
        if !pollWasFull || draining || isStopping.load(ordering: .acquiring) { return true }
        return rollups >= configuration.maxStepRollups
            || ContinuousClock.now - openedAt >= configuration.maxStepDuration
    }

    /// The batches topic's partition count, asked again every minute (a topic may grow).
    private func partitions() -> Int? {
        if let known = partitionCount.withLock({ $0 }), ContinuousClock.now - known.checkedAt < .seconds(60) {
            return known.count
        }
        guard
            let count = try? consumer.partitionCount(topic: configuration.batchesTopic, timeout: .seconds(2)),
            count > 0
        else { return partitionCount.withLock { $0?.count } }
        partitionCount.withLock { $0 = (count, .now) }
        return count
    }

    /// Adds the records of a poll's partitions (`group`) to the open step, after checking where each partition's
    /// records start; false when the sink was asked to stop first (the open step is then abandoned). A store error
    /// (reading a partition's offset and dedupe state) retries with backoff, the poll's messages kept meanwhile.
    private func add(_ group: [Int], messages: [Int: [KafkaConsumerMessage]], draining: Bool) -> Bool {
        var delay = configuration.retryDelay
        while true {
            do {
                try addOnce(group, messages: messages, draining: draining)
                return true
            } catch {
                noteFailure(error)
                log(
                    .error, "store read failed; retrying",
                    ["partitions": group.map(String.init).joined(separator: ","), "error": String(describing: error)])
            }
            if shouldGiveUp(draining: draining) {
                abandonStep()
                return false
            }
            pause(&delay, draining: draining)
        }
    }

    private func addOnce(_ group: [Int], messages: [Int: [KafkaConsumerMessage]], draining: Bool) throws {
        let topic = configuration.batchesTopic
        guard let partitions = partitions() else {
            throw SinkError(.kafkaFailed, "the partition count of \(topic) is not known yet")
        }
        var inputs: [PartitionSteps.Input] = []
        var read: [Int: [KafkaConsumerMessage]] = [:]
        try steps.withLock { steps in
            for partition in group {
                guard
                    let records = try recordsToCount(partition: partition, messages: messages[partition]!, steps: steps)
                else { continue }
                let last = records[records.count - 1]
                let caughtUp =
                    consumer.cachedWatermarks(topic: topic, partition: partition).map { last.offset + 1 >= $0.high }
                    ?? false
                inputs.append(
                    PartitionSteps.Input(
                        partition: partition, records: records.map { ($0.offset, $0.value) },
                        caughtUpAt: caughtUp ? Timestamp(Date()) : nil))
                read[partition] = records
            }
        }
        guard !inputs.isEmpty else { return }
        let newest = read.values.compactMap { $0.last?.timestamp }.max()
        let bad = try steps.withLock { try $0.add(inputs, partitions: partitions) }
        openStepNewest.withLock { current in
            if let newest, current.map({ newest > $0 }) ?? true { current = newest }
        }
        // Dead letters before the step commits: a record skipped by a committed step must already be in the file.
        for bad in bad {
            guard let message = read[bad.partition]?.first(where: { $0.offset == bad.record.offset }) else { continue }
            guard
                deadLetter(
                    Origin(message), reason: bad.record.reason, what: "skipped a record that is not a batch record",
                    draining: draining)
            else {
                abandonStep()
                throw SinkError(.deadLetterFailed, "stopped before the dead letters were written")
            }
        }
    }

    /// Commits the open step, if any, in one store transaction, each partition fenced by the offset its part of the
    /// step began from; false when the sink was asked to stop before it committed (it is then abandoned).
    ///
    /// A store error retries the same step with backoff (it is data by then: its records are gone). A fence (another
    /// sink moved a partition on) ends the step: every partition of it is read again, the fenced one from the store's
    /// offset and the others from where the step began, since nothing of it was stored.
    @discardableResult
    private func endStep(draining: Bool) -> Bool {
        let made = steps.withLock { $0.finishStep() }
        let newest = openStepNewest.withLock { newest in
            defer { newest = nil }
            return newest
        }
        guard !made.steps.isEmpty else { return true }
        let topic = configuration.batchesTopic
        var delay = configuration.retryDelay
        while true {
            do {
                let started = ContinuousClock.now
                try steps.withLock { try $0.commit(made.steps) }
                observeCommit(ContinuousClock.now - started)
                committed(made.steps, outcome: made.outcome, newest: newest)
                noteProgress()
                return true
            } catch let fenced as PartitionFenced {
                state.withLock { $0.fenced += 1 }
                log(
                    .info, "another sink moved the partition on; reading the step's partitions again from the store",
                    [
                        "topic": topic, "partition": String(fenced.partition),
                        "stored": fenced.stored.map(String.init) ?? "none",
                        "partitions": made.steps.map { String($0.partition) }.joined(separator: ","),
                    ])
                for step in made.steps {
                    seek(
                        partition: step.partition,
                        to: step.partition == fenced.partition ? fenced.stored : step.startOffset)
                }
                return true
            } catch {
                noteFailure(error)
                log(
                    .error, "store step failed; retrying",
                    [
                        "partitions": made.steps.map { String($0.partition) }.joined(separator: ","),
                        "error": String(describing: error),
                    ])
            }
            if shouldGiveUp(draining: draining) {
                // Not stored: whoever reads these partitions next starts where the step began.
                for step in made.steps { seek(partition: step.partition, to: step.startOffset) }
                return false
            }
            pause(&delay, draining: draining)
        }
    }

    /// Abandons the open step and seeks each of its partitions back to where it began.
    private func abandonStep() {
        let starts = steps.withLock { $0.abandonStep() }
        openStepNewest.withLock { $0 = nil }
        for (partition, offset) in starts.sorted(by: { $0.key < $1.key }) { seek(partition: partition, to: offset) }
    }

    /// Brings progress and counters up to date after `steps` committed.
    private func committed(_ steps: [PartitionStep], outcome: PartitionSteps.Outcome, newest: Date?) {
        let topic = configuration.batchesTopic
        progress.withLock { progress in
            for step in steps {
                let high = consumer.cachedWatermarks(topic: topic, partition: step.partition)?.high ?? step.nextOffset
                progress[step.partition] = PartitionProgress(nextOffset: step.nextOffset, highWatermark: high)
            }
        }
        if outcome.evicted > 0 || outcome.unchecked > 0 {
            // The dedupe bound is reached: copies of the forgotten batches would be counted again.
            log(
                .warning, "dedupe bound reached: counted batches forgotten before the horizon",
                [
                    "partitions": steps.map { String($0.partition) }.joined(separator: ","),
                    "forgotten": String(outcome.evicted), "counted_unchecked": String(outcome.unchecked),
                ])
        }
        let lag = newest.map { max(0, Date().timeIntervalSince($0)) }
        state.withLock { counters in
            counters.addCommitted(outcome, partitionSteps: steps.count)
            if let lag { counters.lagSeconds = lag }
        }
    }

    /// The messages of `partition` to count, when they start where the partition stands (after the open step's
    /// records of it, or at the store's offset; with nothing stored or past retention, at the oldest record left);
    /// nil after seeking the partition there when they do not.
    private func recordsToCount(
        partition: Int, messages: [KafkaConsumerMessage], steps: PartitionSteps
    ) throws -> [KafkaConsumerMessage]? {
        let topic = configuration.batchesTopic
        let next = try steps.nextOffset(partition: partition)
        let first = messages[0].offset
        if first != next {
            // Nothing stored: the partition is read from its beginning. An offset that retention already removed:
            // from the oldest record left (what was lost is lost, and logged).
            let low = try consumer.watermarks(topic: topic, partition: partition, timeout: .seconds(5)).low
            let expected = next.map { max($0, low) } ?? low
            if first != expected {
                seek(partition: partition, to: expected)
                return nil
            }
            if (next ?? 0) < low {
                // Also with nothing stored: a store that starts on a topic whose first records are gone lacks them.
                warnRemovedByRetention(partition: partition, stored: next, oldest: low)
            }
        }
        // Within one poll a partition's offsets only rise; anything before the first is dropped.
        let records = messages.filter { $0.offset >= first }
        // A gap inside the poll is records retention removed after the consumer's fetch reached them (it reset to
        // the oldest record left): lost before they were counted, as at a poll's start, and said so.
        for (previous, record) in zip(records, records.dropFirst()) where record.offset > previous.offset + 1 {
            warnRemovedByRetention(partition: partition, stored: previous.offset + 1, oldest: record.offset)
        }
        return records
    }

    /// Logs that `partition`'s records from `stored` (its beginning when nil) up to `oldest` were gone before they
    /// were counted.
    private func warnRemovedByRetention(partition: Int, stored: Int64?, oldest: Int64) {
        log(
            .warning, "records were removed by retention before they were counted",
            ["partition": String(partition), "stored": stored.map(String.init) ?? "none", "oldest": String(oldest)])
    }

    /// Seeks a partition to `offset` (its beginning when nil). A seek that fails is tried again before each poll
    /// while the partition stays assigned (``retryPendingSeeks()``).
    private func seek(partition: Int, to offset: Int64?) {
        do {
            if seekFailuresToInject.load(ordering: .relaxed) > 0 {
                seekFailuresToInject.subtract(1, ordering: .relaxed)
                throw SinkError(.kafkaFailed, "injected seek failure")
            }
            try consumer.seek(topic: configuration.batchesTopic, partition: partition, offset: offset ?? -2)
            pendingSeeks.withLock { _ = $0.removeValue(forKey: partition) }
            state.withLock { $0.seeks += 1 }
        } catch {
            pendingSeeks.withLock { $0[partition] = offset }
            log(
                .info, "could not seek; trying again before the next poll",
                ["partition": String(partition), "error": String(describing: error)])
        }
    }

    /// Tries the seeks that failed again; a partition no longer assigned is left alone (its next owner reads it from
    /// the store's offset).
    private func retryPendingSeeks() {
        let pending = pendingSeeks.withLock { $0 }
        guard !pending.isEmpty else { return }
        guard let assigned = try? consumer.assignment() else { return }
        let topic = configuration.batchesTopic
        let partitions = Set(assigned.filter { $0.topic == topic }.map(\.partition))
        for (partition, offset) in pending.sorted(by: { $0.key < $1.key }) {
            if partitions.contains(partition) {
                seek(partition: partition, to: offset)
            } else {
                pendingSeeks.withLock { _ = $0.removeValue(forKey: partition) }
            }
        }
    }

    /// Every `freshnessInterval`, writes the freshness of each assigned partition that is caught up (nothing to
    /// read): a step without records, fenced like any other.
    private func writeFreshnessIfDue() {
        let now = ContinuousClock.now
        let isDue = lastFreshness.withLock { last in
            guard last.map({ now - $0 >= configuration.freshnessInterval }) ?? true else { return false }
            last = now
            return true
        }
        guard isDue, let partitions = partitions() else { return }
        let topic = configuration.batchesTopic
        let assigned = ((try? consumer.assignment()) ?? []).filter { $0.topic == topic }.map(\.partition)
        for partition in assigned {
            let marks =
                consumer.cachedWatermarks(topic: topic, partition: partition)
                ?? (try? consumer.watermarks(topic: topic, partition: partition, timeout: .seconds(1)))
            guard let marks else { continue }
            do {
                try steps.withLock { steps in
                    let stored = try steps.storedOffset(partition: partition)
                    // Caught up: nothing stored and nothing to read, or the stored offset at the end.
                    guard (stored ?? marks.low) >= marks.high else { return }
                    let step = PartitionStep(
                        topic: topic, partition: partition, partitions: partitions, startOffset: stored,
                        nextOffset: stored ?? marks.high, forgetBefore: 0, completeUpTo: Timestamp(Date()))
                    try steps.commit(step)
                    state.withLock { $0.batches += 1 }
                    progress.withLock {
                        $0[partition] = PartitionProgress(nextOffset: step.nextOffset, highWatermark: marks.high)
                    }
                }
            } catch is PartitionFenced {
                state.withLock { $0.fenced += 1 }
            } catch {
                noteFailure(error)
                log(
                    .warning, "could not write freshness",
                    ["partition": String(partition), "error": String(describing: error)])
            }
        }
    }

    /// Where a message came from, for the dead-letter file.
    private struct Origin {
        var topic: String
        var partition: Int
        var offset: Int64
        var value: [UInt8]

        init(_ message: KafkaConsumerMessage) {
            (topic, partition, offset, value) = (message.topic, message.partition, message.offset, message.value)
        }
    }

    /// The deploy markers and manifests of one poll once decoded; `deployOrigins[i]` is where `deploys[i]` came
    /// from.
    private struct Batch {
        var deploys: [DeployMarker] = []
        var deployOrigins: [Origin] = []
        var manifests: [CapabilityManifest] = []
        var manifestOrigins: [Origin] = []
        var newest: Date?
    }

    /// The deploy markers and manifests of `messages`, the bad ones dead-lettered; nil when the sink was asked to
    /// stop while a dead letter could not be written.
    private func decode(_ messages: [KafkaConsumerMessage], draining: Bool) -> Batch? {
        var batch = Batch()
        var bad = 0
        for message in messages {
            if let timestamp = message.timestamp, batch.newest.map({ timestamp > $0 }) ?? true {
                batch.newest = timestamp
            }
            do throws(RollupsError) {
                if message.topic == configuration.manifestsTopic {
                    batch.manifests.append(try Self.manifest(message.value))
                    batch.manifestOrigins.append(Origin(message))
                } else {
                    batch.deploys.append(try DeployMarker(jsonBytes: message.value))
                    batch.deployOrigins.append(Origin(message))
                }
            } catch {
                bad += 1
                guard
                    deadLetter(
                        Origin(message), reason: error.message, what: "skipped a bad message", draining: draining)
                else { return nil }
            }
        }
        if bad > 0 { state.withLock { $0.badMessages += bad } }
        return batch
    }

    /// A manifest from the topic, validated as `POST /v1/manifests` validates it.
    private static func manifest(_ value: [UInt8]) throws(RollupsError) -> CapabilityManifest {
        // Whoever writes the topic holds Kafka credentials, but the names still meet the ingest rule.
        do {
            return try CapabilityManifest(jsonBytes: value)
        } catch {
            throw RollupsError(.invalidManifest, "Invalid manifest: \(error)")
        }
    }

    /// Logs, counts and dead-letters one message the sink cannot use. A dead letter that cannot be written stalls
    /// the sink: it retries with backoff until written (true) or the sink is asked to stop (false), for a message
    /// skipped unseen would be lost.
    private func deadLetter(_ origin: Origin, reason: String, what: String, draining: Bool) -> Bool {
        var fields = [
            "topic": origin.topic, "partition": String(origin.partition), "offset": String(origin.offset),
            "error": reason,
        ]
        guard let deadLetters else {
            log(.warning, what, fields)
            return true
        }
        var delay = configuration.retryDelay
        while true {
            do {
                try deadLetters.append(
                    topic: origin.topic, partition: origin.partition, offset: origin.offset, reason: reason,
                    value: origin.value)
                state.withLock { $0.deadLetters += 1 }
                fields["dead_letters"] = deadLetters.path
                log(.warning, what, fields)
                return true
            } catch {
                state.withLock {
                    $0.errors += 1
                    $0.storeErrors["dead_letters", default: 0] += 1
                }
                let stall = SinkStall(
                    reason: "dead_letters_unwritable",
                    message: "The dead-letter file cannot be written: \(error.message)")
                setStall(stall)
                log(.error, "cannot write a dead letter; not moving on until it is written", ["error": error.message])
            }
            if shouldGiveUp(draining: draining) { return false }
            pause(&delay, draining: draining)
        }
    }

    /// Counts a failed store attempt by kind and records the stall it causes until the next step commits.
    private func noteFailure(_ error: any Error) {
        let kind = SinkStall.kind(of: error)
        state.withLock {
            $0.errors += 1
            $0.storeErrors[kind, default: 0] += 1
        }
        // Any failure that holds the sink back shows; a store-wide one by its own reason.
        let stall =
            (error as? RollupStoreError).flatMap { SinkStall(storeError: $0) }
            ?? SinkStall(reason: "store_error", message: "The store refused the step: \(error)")
        setStall(stall)
    }

    /// Records a stall, keeping the first failure's time while the reason stays the same.
    private func setStall(_ stall: SinkStall) {
        currentStall.withLock { current in
            if current?.reason == stall.reason {
                current?.message = stall.message
            } else {
                current = stall
            }
        }
    }

    /// Clears the stall after a step committed, and says so.
    private func noteProgress() {
        let ended = currentStall.withLock { stall -> SinkStall? in
            defer { stall = nil }
            return stall
        }
        guard let ended else { return }
        log(
            .info, "the sink moves on again",
            ["was": ended.reason, "stalled_seconds": String(Int(Date().timeIntervalSince(ended.since)))])
    }

    /// Whether a retry loop should give up now: asked to stop (and not draining), or past the drain's deadline.
    private func shouldGiveUp(draining: Bool) -> Bool {
        if isStopping.load(ordering: .acquiring) && !draining { return true }
        if draining, let deadline = drainDeadline.withLock({ $0 }), ContinuousClock.now >= deadline { return true }
        return false
    }

    /// Sleeps for `delay` (waking early when asked to stop, unless draining) and doubles it up to 30 s.
    private func pause(_ delay: inout Duration, draining: Bool) {
        let until = ContinuousClock.now + delay
        while ContinuousClock.now < until && !shouldGiveUp(draining: draining) {
            pauseWakeup.wait(for: min(until - ContinuousClock.now, .milliseconds(100)))
        }
        delay = min(delay * 2, .seconds(30))
    }

    /// Applies a batch, retrying store errors with backoff until it succeeds or the sink stops; false when stopped
    /// before the batch was applied (its offsets must not be committed). When the store refuses a message's own
    /// data, the batch goes through ``applyAlone(_:draining:)`` to set that message aside; a store-wide error only
    /// waits.
    private func applyWithRetry(_ batch: Batch, draining: Bool) -> Bool {
        var delay = configuration.retryDelay
        var batch = batch
        while true {
            do {
                try apply(batch)
                noteProgress()
                return true
            } catch let error as RollupStoreError where error.refusesData {
                noteFailure(error)
                log(.error, "store refused the batch; applying its messages one by one", ["error": error.message])
                do {
                    guard let left = try applyAlone(batch, draining: draining) else { return false }
                    batch = left
                    try apply(batch)
                    noteProgress()
                    return true
                } catch {
                    noteFailure(error)
                    log(.error, "store apply failed; retrying the batch", ["error": String(describing: error)])
                }
            } catch {
                noteFailure(error)
                log(.error, "store apply failed; retrying the batch", ["error": String(describing: error)])
            }
            if shouldGiveUp(draining: draining) { return false }
            pause(&delay, draining: draining)
        }
    }

    /// Applies each message of `batch` in a transaction of its own, dead-letters those whose data the store refuses,
    /// and returns what is left to apply again (the messages that met any other error); nil when stopped while a
    /// dead letter could not be written.
    private func applyAlone(_ batch: Batch, draining: Bool) throws -> Batch? {
        var left = Batch(newest: batch.newest)
        for (deploy, origin) in zip(batch.deploys, batch.deployOrigins) {
            do {
                try apply(Batch(deploys: [deploy], deployOrigins: [origin]))
            } catch let error as RollupStoreError where error.refusesData {
                state.withLock { $0.refusedMessages += 1 }
                let what = "the store refused a message; skipped"
                guard deadLetter(origin, reason: error.message, what: what, draining: draining) else { return nil }
            } catch {
                left.deploys.append(deploy)
                left.deployOrigins.append(origin)
            }
        }
        for (manifest, origin) in zip(batch.manifests, batch.manifestOrigins) {
            do {
                try apply(Batch(manifests: [manifest], manifestOrigins: [origin]))
            } catch let error as RollupStoreError where error.refusesData {
                state.withLock { $0.refusedMessages += 1 }
                let what = "the store refused a message; skipped"
                guard deadLetter(origin, reason: error.message, what: what, draining: draining) else { return nil }
            } catch {
                left.manifests.append(manifest)
                left.manifestOrigins.append(origin)
            }
        }
        return left
    }

    private func apply(_ batch: Batch) throws {
        for deploy in batch.deploys {
            try store.recordDeploy(deploy)
        }
        for manifest in batch.manifests {
            try store.recordManifest(manifest)
        }
        state.withLock { counters in
            counters.deploys += batch.deploys.count
            counters.manifests += batch.manifests.count
        }
    }
}
