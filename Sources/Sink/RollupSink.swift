import FlowmeterModels
import Foundation
import Kafka
import Lifecycle
public import RollupStore
import Rollups
import Synchronization

/// Consumes `flowmeter.rollups.v1` (and `flowmeter.deploys.v1` and `flowmeter.manifests.v1`) as a consumer group and
/// merges it into a store.
///
/// Each poll batch is decoded (a message that is not a valid partial rollup, collector watermark, deploy marker or
/// manifest is counted, written to the dead-letter file and skipped, never retried), applied in ONE `RollupStore.apply`
/// call, its watermarks recorded after that, and only then are its offsets committed. When the store refuses a batch
/// for good (an error that is not retriable), its messages are applied one by one and those the store still refuses
/// are dead-lettered, so one message never stalls a partition. The store skips ids it applied before, so a sink killed between the store transaction and the commit replays the batch
/// harmlessly when it (or another member of the group) starts again.
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
    private let store: any RollupStore
    private let consumer: KafkaConsumer
    private let log: Log
    private let state = Mutex<RollupSinkCounters>(RollupSinkCounters())
    private let isStopping = Atomic<Bool>(false)
    private let isRunning = Atomic<Bool>(false)
    private let drainDeadline = Mutex<ContinuousClock.Instant?>(nil)
    private let hasConsumed = Atomic<Bool>(false)
    private let stopped = DispatchSemaphore(value: 0)
    private let deadLetters: DeadLetterFile?

    /// Makes the consumer and subscribes to the topics; reads nothing until `run()` or `pollOnce()`.
    public init(
        configuration: RollupSinkConfiguration, store: any RollupStore, log: @escaping Log = { _, _, _ in }
    ) throws(SinkError) {
        self.configuration = configuration
        self.store = store
        self.log = log
        self.deadLetters = configuration.deadLetterPath.map(DeadLetterFile.init(path:))
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
                topics: [configuration.rollupsTopic]
                    + [configuration.deploysTopic, configuration.manifestsTopic].compactMap { $0 })
        } catch {
            throw SinkError(.consumerFailed, "could not make the rollups consumer: \(error)")
        }
    }

    deinit {
        consumer.close()
    }

    /// The totals so far.
    public var counters: RollupSinkCounters {
        state.withLock { $0 }
    }

    /// Polls, applies and commits until `stop()`; then leaves the group. Throws only for permanent Kafka errors.
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
        // Asked to drain: keep applying until three polls in a row come back empty (caught up) or the deadline
        // passes. One empty poll is not proof on a loaded machine: a fetch of what a collector flushed at its
        // shutdown can take longer than one poll's timeout. An empty poll before the first message may only mean
        // the group has not assigned partitions yet, so it does not count.
        var emptyPolls = 0
        while let deadline = drainDeadline.withLock({ $0 }), ContinuousClock.now < deadline {
            if try pollOnce(draining: true) > 0 {
                emptyPolls = 0
            } else if hasConsumed.load(ordering: .relaxed) {
                emptyPolls += 1
                if emptyPolls == 3 { break }
            }
        }
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
    /// - Parameter draining: keep consuming for up to this long until three polls in a row find nothing new (once the sink has
    ///   received anything at all), so that what a collector in the same process flushed at its shutdown reaches
    ///   the store.
    public func stop(draining: Duration = .zero, timeout: Duration = .seconds(30)) {
        if draining > .zero { drainDeadline.withLock { $0 = .now + draining } }
        guard !isStopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        if isRunning.load(ordering: .acquiring) {
            let bound = max(timeout, draining + .seconds(5))
            _ = stopped.wait(timeout: .now() + .milliseconds(Int((bound / .milliseconds(1)).rounded())))
        } else {
            consumer.close()
        }
    }

    /// One step of the loop: polls up to `maxBatch` messages, applies them in one store call, then commits the
    /// offsets when `commit` is true. Returns the messages polled.
    ///
    /// `commit: false` leaves the offsets where they were, as a sink killed right after the store transaction would;
    /// tests use it to show that the replay does not count twice.
    @discardableResult
    public func pollOnce(commit: Bool = true) throws(SinkError) -> Int {
        try pollOnce(commit: commit, draining: false)
    }

    private func pollOnce(commit: Bool = true, draining: Bool) throws(SinkError) -> Int {
        let messages: [KafkaConsumerMessage]
        do {
            messages = try consumer.poll(maxMessages: configuration.maxBatch, timeout: configuration.pollTimeout)
        } catch {
            if isStopping.load(ordering: .acquiring) && !draining { return 0 }
            throw SinkError(.kafkaFailed, "polling failed: \(error)")
        }
        guard !messages.isEmpty else { return 0 }
        hasConsumed.store(true, ordering: .relaxed)
        let batch = decode(messages)
        guard applyWithRetry(batch, draining: draining) else { return messages.count }
        if commit {
            do {
                try consumer.commit()
                state.withLock { $0.commits += 1 }
            } catch {
                // The next commit covers these offsets too; a crash before it replays them harmlessly.
                state.withLock { $0.errors += 1 }
                log(.warning, "offset commit failed", ["error": String(describing: error)])
            }
        }
        return messages.count
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

    /// What one poll batch carries once decoded; `partialOrigins[i]` is where `partials[i]` came from. Watermarks
    /// are recorded only after the batch's partial rollups are applied, since they vouch for what came before them.
    private struct Batch {
        var partials: [PartialRollup] = []
        var partialOrigins: [Origin] = []
        var watermarks: [CollectorWatermark] = []
        var deploys: [DeployMarker] = []
        var deployOrigins: [Origin] = []
        var manifests: [CapabilityManifest] = []
        var manifestOrigins: [Origin] = []
        var newest: Date?
    }

    private func decode(_ messages: [KafkaConsumerMessage]) -> Batch {
        var batch = Batch()
        var bad = 0
        for message in messages {
            if let timestamp = message.timestamp, batch.newest.map({ timestamp > $0 }) ?? true {
                batch.newest = timestamp
            }
            do throws(RollupsError) {
                if message.topic == configuration.rollupsTopic {
                    switch try RollupsTopicMessage(jsonBytes: message.value) {
                    case .partial(let partial):
                        batch.partials.append(partial)
                        batch.partialOrigins.append(Origin(message))
                    case .watermark(let watermark):
                        // It vouches for the partition it was read from, and only when it names that one.
                        guard watermark.partition == message.partition else {
                            throw RollupsError(
                                .invalidPartialRollup,
                                "Watermark for partition \(watermark.partition) read from partition \(message.partition)"
                            )
                        }
                        batch.watermarks.append(watermark)
                    }
                } else if message.topic == configuration.manifestsTopic {
                    batch.manifests.append(try Self.manifest(message.value))
                    batch.manifestOrigins.append(Origin(message))
                } else {
                    batch.deploys.append(try DeployMarker(jsonBytes: message.value))
                    batch.deployOrigins.append(Origin(message))
                }
            } catch {
                bad += 1
                deadLetter(Origin(message), reason: error.message, what: "skipped a bad message")
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

    /// Logs, counts and dead-letters one message the sink cannot use.
    private func deadLetter(_ origin: Origin, reason: String, what: String) {
        var fields = [
            "topic": origin.topic, "partition": String(origin.partition), "offset": String(origin.offset),
            "error": reason,
        ]
        if let deadLetters {
            do {
                try deadLetters.append(
                    topic: origin.topic, partition: origin.partition, offset: origin.offset, reason: reason,
                    value: origin.value)
                state.withLock { $0.deadLetters += 1 }
                fields["dead_letters"] = deadLetters.path
            } catch {
                state.withLock { $0.errors += 1 }
                fields["dead_letter_error"] = error.message
            }
        }
        log(.warning, what, fields)
    }

    /// Applies a batch, retrying store errors with backoff until it succeeds or the sink stops; false when stopped
    /// before the batch was applied (its offsets must not be committed). A permanent store error sends the batch
    /// through ``applyAlone(_:)`` instead of retrying it forever.
    private func applyWithRetry(_ batch: Batch, draining: Bool) -> Bool {
        var delay = configuration.retryDelay
        var batch = batch
        while true {
            do {
                try apply(batch)
                return true
            } catch let error as RollupStoreError where !error.isRetriable {
                state.withLock { $0.errors += 1 }
                log(.error, "store refused the batch; applying its messages one by one", ["error": error.message])
                do {
                    batch = try applyAlone(batch)
                    try apply(batch)
                    return true
                } catch {
                    log(.error, "store apply failed; retrying the batch", ["error": String(describing: error)])
                }
            } catch {
                state.withLock { $0.errors += 1 }
                log(.error, "store apply failed; retrying the batch", ["error": String(describing: error)])
            }
            if isStopping.load(ordering: .acquiring) && !draining { return false }
            if draining, let deadline = drainDeadline.withLock({ $0 }), ContinuousClock.now >= deadline { return false }
            Thread.sleep(forTimeInterval: delay / .seconds(1))
            delay = min(delay * 2, .seconds(30))
            if isStopping.load(ordering: .acquiring) && !draining { return false }
        }
    }

    /// Applies each message of `batch` in a transaction of its own, dead-letters those the store refuses for good, and
    /// returns what is left to apply again (the messages that met a retriable error); throws nothing permanent.
    private func applyAlone(_ batch: Batch) throws -> Batch {
        var left = Batch(watermarks: batch.watermarks, newest: batch.newest)
        for (partial, origin) in zip(batch.partials, batch.partialOrigins) {
            do {
                try apply(Batch(partials: [partial], partialOrigins: [origin]))
            } catch let error as RollupStoreError where !error.isRetriable {
                state.withLock { $0.refusedMessages += 1 }
                deadLetter(origin, reason: error.message, what: "the store refused a message; skipped")
            } catch {
                left.partials.append(partial)
                left.partialOrigins.append(origin)
            }
        }
        for (deploy, origin) in zip(batch.deploys, batch.deployOrigins) {
            do {
                try apply(Batch(deploys: [deploy], deployOrigins: [origin]))
            } catch let error as RollupStoreError where !error.isRetriable {
                state.withLock { $0.refusedMessages += 1 }
                deadLetter(origin, reason: error.message, what: "the store refused a message; skipped")
            } catch {
                left.deploys.append(deploy)
                left.deployOrigins.append(origin)
            }
        }
        for (manifest, origin) in zip(batch.manifests, batch.manifestOrigins) {
            do {
                try apply(Batch(manifests: [manifest], manifestOrigins: [origin]))
            } catch let error as RollupStoreError where !error.isRetriable {
                state.withLock { $0.refusedMessages += 1 }
                deadLetter(origin, reason: error.message, what: "the store refused a message; skipped")
            } catch {
                left.manifests.append(manifest)
                left.manifestOrigins.append(origin)
            }
        }
        return left
    }

    private func apply(_ batch: Batch) throws {
        let result =
            batch.partials.isEmpty ? RollupApplyResult(applied: 0, duplicates: 0) : try store.apply(batch.partials)
        for deploy in batch.deploys {
            try store.recordDeploy(deploy)
        }
        for manifest in batch.manifests {
            try store.recordManifest(manifest)
        }
        if !batch.watermarks.isEmpty { try store.recordWatermarks(batch.watermarks) }
        let lag = batch.newest.map { max(0, Date().timeIntervalSince($0)) }
        state.withLock { counters in
            counters.applied += result.applied
            counters.duplicates += result.duplicates
            counters.deploys += batch.deploys.count
            counters.manifests += batch.manifests.count
            counters.watermarks += batch.watermarks.count
            counters.batches += 1
            if let lag { counters.lagSeconds = lag }
        }
    }
}
