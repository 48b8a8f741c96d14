import FlowmeterModels
import Foundation
import Kafka
import Logging
import Rollups
import Synchronization

/// Drains the rollup aggregator every interval and sends the deltas to `flowmeter.rollups.v1` (or, in `--kafka none`
/// mode with a store, straight into the store), retrying failures with the same message ids.
///
/// Ingest threads only call `aggregator.record`; everything here runs on the `rollup-flush` thread (or the caller of
/// `flush()`), so a slow or failing Kafka never blocks ingest. A failed message is kept and sent again at the next
/// flush, at most `maxAttempts` times and at most `maxPending` messages at once; beyond either bound it is dropped and
/// counted. Same ids on every attempt make a retry that duplicates a message harmless (the sink applies an id once).
///
/// Every flush also sends the collector's watermark (``CollectorWatermark``) to every partition of the topic (into
/// the store, without Kafka): the drain instant of its newest flush that is wholly delivered (``WatermarkTracker``),
/// and at a clean stop a last one that says so.
final class RollupPublisher: Sendable {
    /// The aggregator ingest records into.
    let aggregator: RollupAggregator
    private let producer: KafkaProducer?
    private let delivery: SpoolingDelivery?
    private let store: (any CollectorStore)?
    private let topic: String
    private let headers: [KafkaHeader]
    private let interval: Duration
    private let maxAttempts: Int
    private let maxPending: Int
    private let metrics: CollectorMetrics
    private let logger: Logger
    private let retries = Mutex<[Attempt]>([])
    // One flush at a time: the timer, a test's explicit flush and the final drain never interleave.
    private let flushing = Mutex<Void>(())
    private let wake = DispatchSemaphore(value: 0)
    private let isStopped = Atomic<Bool>(false)
    private let isStarted = Atomic<Bool>(false)
    private let sentTotal = Atomic<Int>(0)
    private let threadDone = DispatchSemaphore(value: 0)
    private let clock: @Sendable () -> Timestamp
    private let tracker: Mutex<WatermarkTracker>
    private let partitions = Mutex<(count: Int?, askedAt: ContinuousClock.Instant)?>(nil)
    // The flushes of messages the spool took: they reach Kafka when the replay delivers them, which is known only
    // once the spool holds nothing unsettled.
    private let spooledFlushes: Mutex<[Int]>

    /// A partial rollup with the number of times it was sent without success.
    struct Attempt: Sendable {
        var partial: PartialRollup
        var failures: Int
        /// The flush that drained it (``WatermarkTracker``).
        var flush: Int
    }

    init(
        aggregator: RollupAggregator, producer: KafkaProducer?, delivery: SpoolingDelivery?,
        store: (any CollectorStore)?, topic: String,
        interval: Duration, maxAttempts: Int, maxPending: Int, metrics: CollectorMetrics, logger: Logger,
        clock: @escaping @Sendable () -> Timestamp = { Timestamp(Date()) }
    ) {
        self.clock = clock
        // Records an earlier run left in the spool are replayed after this start: until they are delivered, this
        // run's watermark claims nothing (the earlier run's last watermark stands).
        let recovered = delivery?.spool.isEngaged ?? false
        self.tracker = Mutex(WatermarkTracker(startedAt: clock(), awaitsRecovered: recovered))
        self.spooledFlushes = Mutex(recovered ? [WatermarkTracker.recoveredFlush] : [])
        self.aggregator = aggregator
        self.producer = producer
        self.delivery = delivery
        self.store = store
        self.topic = topic
        self.headers = KafkaHeader.json(schema: topic)
        self.interval = interval
        self.maxAttempts = max(1, maxAttempts)
        self.maxPending = max(1, maxPending)
        self.metrics = metrics
        self.logger = logger
    }

    /// Partial rollups sent since the start (enqueued to Kafka or handed to the store), retries included.
    var sentCount: Int { sentTotal.load(ordering: .relaxed) }

    /// Messages waiting for another attempt.
    var pendingCount: Int { retries.withLock { $0.count } }

    /// Starts the flush thread.
    func start() {
        let started = Thread { [self] in
            while !isStopped.load(ordering: .acquiring) {
                let milliseconds = max(1, Int((interval / .milliseconds(1)).rounded()))
                _ = wake.wait(timeout: .now() + .milliseconds(milliseconds))
                if isStopped.load(ordering: .acquiring) { break }
                flush()
            }
            threadDone.signal()
        }
        started.name = "rollup-flush"
        isStarted.store(true, ordering: .releasing)
        started.start()
    }

    /// Stops the flush thread (without a final flush; call `flush()` after intake stopped).
    func stop() {
        guard !isStopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        guard isStarted.load(ordering: .acquiring) else { return }
        wake.signal()
        _ = threadDone.wait(timeout: .now() + .seconds(30))
    }

    /// Drains the aggregator and sends the delta plus every message waiting for a retry; returns how many messages
    /// were sent (to Kafka: enqueued; to a store: applied or skipped as duplicates).
    ///
    /// Blocks on the store in store mode; never blocks on Kafka (deliveries are reported later).
    @discardableResult
    func flush() -> Int {
        flushing.withLock { _ in
            // Taken before the drain: every batch answered before it was recorded before the drain, so it is in it.
            let drainedAt = clock()
            var fresh = aggregator.drain()
            var attempts = retries.withLock { waiting -> [Attempt] in
                defer { waiting = [] }
                return waiting
            }
            let flush = tracker.withLock { $0.flushed(count: fresh.count, drainedAt: drainedAt) }
            // Moved in from the end, not mapped: a copy of a partial retains every string and sketch it holds.
            attempts.reserveCapacity(attempts.count + fresh.count)
            fresh.reverse()
            while let partial = fresh.popLast() {
                attempts.append(Attempt(partial: partial, failures: 0, flush: flush))
            }
            var sent = 0
            if !attempts.isEmpty {
                metrics.rollupFlushes.increment()
                if let delivery {
                    sent = send(attempts, delivery: delivery)
                } else if let producer {
                    sent = send(attempts, producer: producer)
                } else if let store {
                    sent = apply(attempts, store: store)
                }
                sentTotal.add(sent, ordering: .relaxed)
            }
            publishWatermark(isStopped: false)
            return sent
        }
    }

    /// Sends the last watermark: `stopped` when every flushed message is delivered, else an ordinary one, since some
    /// rollups are still missing. Call it after the final drain; it waits up to `bound` for that drain's deliveries
    /// (only those: events still in the producer's queue are the producer's to flush).
    func publishFinalWatermark(waitingUpTo bound: Duration) {
        let deadline = ContinuousClock.now + bound
        while settleSpooledFlushes() && ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.02)
        }
        flushing.withLock { _ in
            let isDelivered = !settleSpooledFlushes() && pendingCount == 0
            publishWatermark(isStopped: isDelivered)
            logger.info(
                "rollup watermark sent", ["stopped": String(isDelivered), "pending": String(pendingCount)])
        }
    }

    /// Sends the watermark to every partition of the topic (or records it in the store); a failure only delays the
    /// next one.
    private func publishWatermark(isStopped: Bool) {
        settleSpooledFlushes()
        let (completeUpTo, hasClaim) = tracker.withLock { ($0.completeUpTo, $0.hasClaim) }
        guard hasClaim else { return }
        let collector = aggregator.configuration.collectorID
        if let producer {
            guard let count = partitionCount(producer) else { return }
            do {
                try producer.enqueueBatch(capacity: count, completion: { _ in }) { writer in
                    for partition in 0..<count {
                        let watermark = CollectorWatermark(
                            collector: collector, partition: partition, partitions: count,
                            completeUpTo: completeUpTo, isStopped: isStopped)
                        try writer.append(
                            topic: topic, partition: partition, key: watermark.kafkaKey, value: watermark.jsonBytes(),
                            headers: headers)
                    }
                }
            } catch {
                logger.debug("rollup watermark not sent", ["error": String(describing: error)])
            }
        } else if let store {
            do {
                try store.recordWatermarks([
                    CollectorWatermark(
                        collector: collector, partition: 0, partitions: 1, completeUpTo: completeUpTo,
                        isStopped: isStopped)
                ])
            } catch {
                logger.debug("rollup watermark not stored", ["error": String(describing: error)])
            }
        }
    }

    /// Finishes the flushes the spool took once it holds nothing unsettled (what it took of them is in Kafka then);
    /// returns whether some flush still waits for a delivery.
    @discardableResult
    private func settleSpooledFlushes() -> Bool {
        if let delivery, !delivery.spool.isEngaged {
            let delivered = spooledFlushes.withLock { flushes in
                defer { flushes.removeAll() }
                return flushes
            }
            tracker.withLock { tracker in
                for flush in delivered { tracker.finish(flush) }
            }
        }
        return tracker.withLock { $0.hasPending }
    }

    /// The rollups topic's partitions, asked of the brokers at most once a minute (every 10 s while they do not
    /// answer, so a flush waits at most 2 s for them now and then); nil until they first answer.
    private func partitionCount(_ producer: KafkaProducer) -> Int? {
        let known = partitions.withLock { $0 }
        if let known, ContinuousClock.now - known.askedAt < (known.count == nil ? .seconds(10) : .seconds(60)) {
            return known.count
        }
        do {
            let count = try producer.partitionCount(of: topic, timeout: .seconds(2))
            partitions.withLock { $0 = (count > 0 ? count : known?.count, .now) }
        } catch {
            // Keep the last count: the brokers may be away for a while, and the watermark waits in the queue.
            partitions.withLock { $0 = (known?.count, .now) }
        }
        return partitions.withLock { $0?.count }
    }

    private func send(_ attempts: [Attempt], producer: KafkaProducer) -> Int {
        var enqueued = 0
        do {
            try producer.enqueueBatch(
                capacity: attempts.count,
                completion: { [self] outcome in
                    let delivered = outcome.persisted
                    if delivered > 0 { metrics.rollupMessages.labels("delivered").increment(by: UInt64(delivered)) }
                    let failed = Set(outcome.failures.map(\.index))
                    tracker.withLock { tracker in
                        for index in 0..<outcome.enqueued where !failed.contains(index) {
                            tracker.finish(attempts[index].flush)
                        }
                    }
                    guard !outcome.failures.isEmpty else { return }
                    metrics.rollupDeliveryErrors.increment(by: UInt64(outcome.failures.count))
                    retry(outcome.failures.map { attempts[$0.index] }, error: outcome.failures.first?.error)
                }
            ) { writer in
                for attempt in attempts {
                    try writer.append(
                        topic: topic, key: attempt.partial.kafkaKey, value: attempt.partial.jsonBytes(),
                        headers: headers)
                    enqueued += 1
                }
            }
        } catch {
            // The messages before the failed append are enqueued and reported to the completion; keep the rest.
            metrics.rollupDeliveryErrors.increment(by: UInt64(attempts.count - enqueued))
            retry(Array(attempts[enqueued...]), error: error)
        }
        return enqueued
    }

    // Through the spool: a flush that Kafka does not take in time is spooled like an ingest batch, so the store's
    // counts match the events topic after an outage.
    private func send(_ attempts: [Attempt], delivery: SpoolingDelivery) -> Int {
        var batch = SpoolBatch(
            topic: topic, headers: headers.map { SpoolRecord.Header(name: $0.name, value: $0.value) },
            records: attempts.count, bytesPerRecord: 1_024)
        for attempt in attempts {
            batch.append(key: attempt.partial.kafkaKey[...], value: attempt.partial.jsonBytes()[...])
        }
        delivery.send(batch, headers: headers) { [self] outcome in
            switch outcome {
            case .persisted:
                metrics.rollupMessages.labels("delivered").increment(by: UInt64(attempts.count))
                tracker.withLock { tracker in
                    for attempt in attempts { tracker.finish(attempt.flush) }
                }
            case .spooled:
                metrics.rollupMessages.labels("spooled").increment(by: UInt64(attempts.count))
                spooledFlushes.withLock { $0 += attempts.map(\.flush) }
            case .unavailable:
                metrics.rollupDeliveryErrors.increment(by: UInt64(attempts.count))
                retry(attempts, error: CollectorError(.spoolWriteFailed, "neither Kafka nor the spool took them"))
            }
        }
        return attempts.count
    }

    private func apply(_ attempts: [Attempt], store: any CollectorStore) -> Int {
        do {
            let result = try store.apply(attempts.map(\.partial))
            metrics.rollupMessages.labels("stored").increment(by: UInt64(result.applied + result.duplicates))
            tracker.withLock { tracker in
                for attempt in attempts { tracker.finish(attempt.flush) }
            }
            return attempts.count
        } catch {
            metrics.rollupDeliveryErrors.increment(by: UInt64(attempts.count))
            retry(attempts, error: error)
            return 0
        }
    }

    /// Keeps failed messages for the next flush, within the bounds; drops and counts the rest.
    private func retry(_ failed: [Attempt], error: (any Error)?) {
        var dropped: [Int] = []
        retries.withLock { waiting in
            for var attempt in failed {
                attempt.failures += 1
                if attempt.failures >= maxAttempts || waiting.count >= maxPending {
                    dropped.append(attempt.flush)
                } else {
                    waiting.append(attempt)
                }
            }
        }
        // A dropped message is lost, not pending: the watermark moves past it (the loss is counted and logged).
        tracker.withLock { tracker in
            for flush in dropped { tracker.finish(flush) }
        }
        if !dropped.isEmpty {
            metrics.rollupMessages.labels("dropped").increment(by: UInt64(dropped.count))
            logger.error(
                "rollup messages dropped after failed deliveries",
                ["count": String(dropped.count), "error": error.map { String(describing: $0) } ?? "unknown"])
        } else {
            logger.warning(
                "rollup delivery failed; retrying at the next flush",
                ["count": String(failed.count), "error": error.map { String(describing: $0) } ?? "unknown"])
        }
    }
}
