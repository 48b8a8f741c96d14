import Foundation
import Kafka
import Lifecycle
import Logging
import Synchronization

/// Produces what the spool holds to Kafka, in order, and settles each record by its delivery report.
///
/// One thread (`spool-replay`) reads chunks from the spool and enqueues them, keeping at most `window` records in
/// flight while Kafka answers, and only a small probe while it looks down (so an outage does not pile the spool
/// into librdkafka's queue, where `message.timeout.ms` would expire it). Reports arrive on the producer's poll
/// thread: persisted records are acknowledged (their segment is removed once all are), failed ones are requeued and
/// counted (`timed_out_requeued` for `ERR__MSG_TIMED_OUT`), and records Kafka refused for good
/// (``KafkaError/isRefusedForGood``) move to the dead-letter segment (on the spool's writer thread, not the poll
/// thread), where an operator can inspect and replay them.
final class SpoolReplay: Sendable {
    private let spool: Spool
    private let producer: KafkaProducer
    private let health: KafkaHealth
    private let metrics: CollectorMetrics
    private let logger: Logger
    private let window: Int
    private let inFlight = Atomic<Int>(0)
    private let isStopped = Atomic<Bool>(false)
    private let isStarted = Atomic<Bool>(false)
    private let loop = LoopThread(named: "spool-replay")

    /// Records in flight while Kafka looks down: enough to notice it is back.
    static let probeWindow = 64
    private static let chunkRecords = 2_000
    private static let chunkBytes = 2 << 20

    init(
        spool: Spool, producer: KafkaProducer, health: KafkaHealth, metrics: CollectorMetrics, logger: Logger,
        window: Int = 20_000
    ) {
        self.spool = spool
        self.producer = producer
        self.health = health
        self.metrics = metrics
        self.logger = logger
        self.window = max(Self.probeWindow, window)
    }

    /// Starts the replay thread.
    func start() {
        guard !isStarted.exchange(true, ordering: .acquiringAndReleasing) else { return }
        loop.start { [self] loop in
            var metadata = MetadataCache()
            while !loop.isStopping {
                let room = (health.isUp ? window : Self.probeWindow) - inFlight.load(ordering: .relaxed)
                guard room > 0,
                    let chunk = spool.nextChunk(
                        maxRecords: min(room, Self.chunkRecords), maxBytes: Self.chunkBytes)
                else {
                    spool.waitForActivity(timeout: .milliseconds(100))
                    continue
                }
                produce(chunk, metadata: &metadata, loop: loop)
            }
        }
    }

    /// Stops producing (records in flight stay with the producer) and suspends until the thread has ended (after
    /// the enqueue in progress).
    func stop() async {
        guard !isStopped.exchange(true, ordering: .acquiringAndReleasing), isStarted.load(ordering: .acquiring) else {
            return
        }
        loop.stop()
        spool.signalActivity()
        await loop.join()
    }

    private func produce(_ chunk: Spool.Chunk, metadata: inout MetadataCache, loop: LoopThread) {
        let locations = chunk.locations
        let count = chunk.records.count
        inFlight.add(count, ordering: .relaxed)
        health.enqueued()
        var enqueued = 0
        do {
            try producer.enqueueBatch(
                capacity: count,
                completion: { [self] outcome in reported(outcome, locations: locations) }
            ) { writer in
                let bytes = chunk.bytes
                for record in chunk.records {
                    let (topic, headers) = metadata.lookup(bytes, record.metadata)
                    if let key = record.key {
                        try writer.append(topic: topic, key: bytes[key], value: bytes[record.value], headers: headers)
                    } else {
                        try writer.append(topic: topic, value: bytes[record.value], headers: headers)
                    }
                    enqueued += 1
                }
            }
        } catch {
            // A full queue, or the producer shutting down: what did not go out is handed out again after a pause.
            inFlight.subtract(count - enqueued, ordering: .relaxed)
            spool.requeue(Array(locations[enqueued...]))
            if !loop.isStopping {
                logger.debug("spool replay paused", ["error": String(describing: error)])
                loop.wait(for: .milliseconds(100))
            }
        }
    }

    private func reported(_ outcome: KafkaBatchOutcome, locations: [Spool.Location]) {
        inFlight.subtract(outcome.enqueued, ordering: .relaxed)
        var persisted: [UInt64: Int] = [:]
        var failed = Set<Int>()
        var retries: [Spool.Location] = []
        var refused: [Spool.Location] = []
        for failure in outcome.failures {
            failed.insert(failure.index)
            let location = locations[failure.index]
            if let error = failure.error, error.isRefusedForGood {
                refused.append(location)
            } else {
                retries.append(location)
                metrics.countRequeue(failure.error)
            }
        }
        for index in 0..<outcome.enqueued where !failed.contains(index) {
            persisted[locations[index].segment, default: 0] += 1
        }
        spool.acknowledge(persisted)
        metrics.spoolReplayed.increment(by: UInt64(outcome.persisted))
        if !refused.isEmpty {
            let error = outcome.failures.first { $0.error?.isRefusedForGood == true }?.error
            spool.deadLetter(refused, error: error.map { String(describing: $0) } ?? "")
        }
        spool.requeue(retries)
        spool.signalActivity()
    }

    /// The topic and Kafka headers of the last metadata block seen: the records of one batch share it, so the
    /// replay decodes it once per batch, not once per record.
    private struct MetadataCache {
        var bytes: [UInt8] = []
        var topic = ""
        var headers: [KafkaHeader] = []

        mutating func lookup(_ buffer: [UInt8], _ range: Range<Int>) -> (String, [KafkaHeader]) {
            if !buffer[range].elementsEqual(bytes) {
                let decoded = buffer.withUnsafeBytes { SpoolFormat.metadata(in: $0, range) }
                bytes = Array(buffer[range])
                topic = decoded.topic
                headers = decoded.headers.map { KafkaHeader(name: $0.name, value: $0.value) }
            }
            return (topic, headers)
        }
    }
}

extension KafkaError {
    /// Whether Kafka refused a record for good, so the spool moves it to its dead-letter segment instead of
    /// producing it again: a permanent error (topic authorization, a message too large, an unknown topic), except
    /// `UNKNOWN_TOPIC_OR_PARTITION`, which Kafka itself treats as retriable and which happens around leader moves
    /// and topic creation: that one is retried like any transient error.
    var isRefusedForGood: Bool {
        !isRetriable && code != .unknownTopicOrPartition
    }
}
