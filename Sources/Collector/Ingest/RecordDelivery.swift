import Kafka
import Logging
import Synchronization

/// The one path by which the collector's records reach Kafka: batch records, deploy markers and manifests alike.
///
/// With a spool (``SpoolingDelivery``) a record is durable once Kafka persisted it or the spool has it synced, and
/// the spool's replay is the one retry mechanism: nothing here retries. Without a spool it is durable once Kafka
/// persisted every part, and anything else is `unavailable` (the caller answers 503 and the client retries).
/// `--ack enqueue` (batches only) trades durability for speed through ``enqueue(_:headers:subject:settled:)``.
final class RecordDelivery: Sendable {
    /// What is being delivered: names it in the log line of an enqueue that failed.
    enum Subject: Sendable {
        case batch, deployMarker, manifest

        /// `a batch`, `a deploy marker`, `a manifest`.
        var noun: String {
            switch self {
            case .batch: "a batch"
            case .deployMarker: "a deploy marker"
            case .manifest: "a manifest"
            }
        }
    }

    /// Why a record is not durable, with what Kafka said when it said anything.
    struct Failure: Sendable, Hashable {
        /// The reason a 503 is counted under.
        var reason: IngestRejection.UnavailableReason
        /// Kafka's error (described), or nil when there is none to show (the spool refused, say).
        var error: String?
    }

    /// How a send ended.
    enum Outcome: Sendable, Hashable {
        /// Kafka persisted every record.
        case persisted
        /// The spool holds them durably; its replay delivers them.
        case spooled
        /// Neither took them: the caller answers 503.
        case unavailable(Failure)
    }

    private let producer: KafkaProducer
    /// The spool in front of the producer, or nil without one.
    let spooling: SpoolingDelivery?
    private let health: KafkaHealth
    private let logger: Logger

    init(producer: KafkaProducer, spooling: SpoolingDelivery?, health: KafkaHealth, logger: Logger) {
        self.producer = producer
        self.spooling = spooling
        self.health = health
        self.logger = logger
    }

    /// Whether a record sent now would need the spool and find it full (``SpoolingDelivery/isRefusingForRoom``);
    /// false without a spool.
    var isRefusingForRoom: Bool { spooling?.isRefusingForRoom ?? false }

    /// Delivers `records` durably and calls `completion` exactly once: on the producer's poll thread, the spool's
    /// threads, or the caller's.
    func send(
        _ records: SpoolBatch, headers: [KafkaHeader], subject: Subject,
        completion: @escaping @Sendable (Outcome) -> Void
    ) {
        if let spooling {
            spooling.send(records, headers: headers) { outcome in
                switch outcome {
                case .persisted: completion(.persisted)
                case .spooled: completion(.spooled)
                case .unavailable(let reason): completion(.unavailable(Failure(reason: reason, error: nil)))
                }
            }
            return
        }
        let expected = records.count
        // The producer reports once, also when an append throws; the throw answers too: the first answer counts.
        let answered = Once()
        health.enqueued()
        do {
            var enqueued = 0
            try producer.enqueueBorrowing(records, headers: headers, enqueued: &enqueued) { outcome in
                guard answered.claim() else { return }
                if outcome.enqueued == expected && outcome.isFullyPersisted {
                    completion(.persisted)
                } else {
                    completion(
                        .unavailable(
                            Failure(
                                reason: outcome.enqueued < expected ? .queueFull : .deliveryFailed,
                                error: outcome.failures.first?.error.map { String(describing: $0) } ?? "not enqueued"
                            )))
                }
            }
        } catch {
            let failure = enqueueFailure(error, subject: subject)
            if answered.claim() { completion(.unavailable(failure)) }
        }
    }

    /// `--ack enqueue`: puts `records` on the producer's queue and returns nil once they are all there (the caller
    /// answers now), or why not. `settled` runs exactly once, when Kafka has reported on every record queued, with
    /// whether all of them were persisted.
    func enqueue(
        _ records: SpoolBatch, headers: [KafkaHeader], subject: Subject,
        settled: @escaping @Sendable (_ isDurable: Bool, KafkaBatchOutcome) -> Void
    ) -> Failure? {
        let expected = records.count
        health.enqueued()
        do {
            var enqueued = 0
            try producer.enqueueBorrowing(records, headers: headers, enqueued: &enqueued) { outcome in
                settled(outcome.enqueued == expected && outcome.isFullyPersisted, outcome)
            }
            return nil
        } catch {
            return enqueueFailure(error, subject: subject)
        }
    }

    /// The failure of an enqueue that threw, logged unless it is a batch meeting a full queue (counted by reason in
    /// the metrics; a line per batch would flood the log under the very load that fills the queue).
    private func enqueueFailure(_ error: any Error, subject: Subject) -> Failure {
        let isQueueFull = (error as? KafkaError)?.code == .queueFull
        if !isQueueFull || subject != .batch {
            logger.error("could not enqueue \(subject.noun)", ["error": String(describing: error)])
        }
        return Failure(reason: isQueueFull ? .queueFull : .deliveryFailed, error: String(describing: error))
    }
}

/// A flag that one caller claims: the first `claim()` returns true, every later one false.
final class Once: Sendable {
    private let isClaimed = Atomic<Bool>(false)

    func claim() -> Bool {
        !isClaimed.exchange(true, ordering: .acquiringAndReleasing)
    }
}
