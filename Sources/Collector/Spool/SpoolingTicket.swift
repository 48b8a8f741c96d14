import Kafka
import Synchronization

/// One batch on its way through ``SpoolingDelivery``: first to Kafka, and to the spool when Kafka does not report
/// in time. Its phase decides who acts on each event; the caller's completion runs exactly once.
///
/// Kafka's report and the threshold race. Whichever comes first while the batch is in Kafka wins: a full success
/// answers `persisted`; a retriable failure or the threshold spools the batch. A report arriving while the batch is
/// being written to the spool is kept and applied once the spool says where the batch went, so every record is
/// settled by exactly one report.
final class SpoolingTicket: Sendable {
    /// Where the batch is; the phases that may still need the batch's bytes hold them, so a batch Kafka persisted
    /// is let go of at once.
    enum Phase: Sendable {
        /// Enqueued to Kafka; no decision yet.
        case inKafka(SpoolBatch)
        /// Being written to the spool; `report` is Kafka's report if it came meanwhile.
        case spooling(SpoolBatch, report: KafkaBatchOutcome?)
        /// In the spool at `location`; Kafka's report, when it comes, settles the records still in flight.
        case spooled(SpoolBatch, Spool.Location)
        /// Answered, and nothing more to do (persisted, refused, or spooling failed).
        case finished
    }

    /// What the caller should do after an event.
    enum Action: Sendable {
        /// Nothing.
        case none
        /// Answer `persisted`.
        case persisted
        /// Answer that the batch could not be delivered (a permanent error).
        case undeliverable
        /// Write the batch to the spool; its first `inFlight` records are still in Kafka's hands.
        case spool(SpoolBatch, inFlight: Int)
        /// Settle the spooled records of the batch with Kafka's report.
        case settle(KafkaBatchOutcome, SpoolBatch, Spool.Location)
    }

    /// When the threshold passes.
    let deadline: ContinuousClock.Instant
    /// How many records the batch holds.
    let count: Int
    /// The caller's answer, until ``answer(_:)`` takes it to run it once. Let go of then, with everything it holds
    /// (the request's pending answer, the batch's events for the rollups): the ticket itself lives until the
    /// threshold thread next passes it, up to 20 ms later, and releasing that much there, out of cache, cost about
    /// 1 % of the collector's CPU under load (perf, the spool-threshold thread).
    private let completion: Mutex<(@Sendable (SpoolingDelivery.Outcome) -> Void)?>
    private let phase: Mutex<Phase>
    private let enqueued = Atomic<Int>(0)

    init(
        batch: SpoolBatch, deadline: ContinuousClock.Instant,
        completion: @escaping @Sendable (SpoolingDelivery.Outcome) -> Void
    ) {
        self.phase = Mutex(.inKafka(batch))
        self.count = batch.count
        self.deadline = deadline
        self.completion = Mutex(completion)
    }

    /// Whether the batch still waits for Kafka or the threshold.
    var isWaiting: Bool {
        phase.withLock { phase in
            if case .inKafka = phase { return true }
            return false
        }
    }

    /// Whether the batch is neither answered nor settled into a place yet (in Kafka, or being spooled).
    var isUndecided: Bool {
        phase.withLock { phase in
            switch phase {
            case .inKafka, .spooling: true
            case .spooled, .finished: false
            }
        }
    }

    /// Records how many messages the enqueue put on the producer's queue.
    func enqueued(_ count: Int) {
        enqueued.store(count, ordering: .releasing)
    }

    /// Kafka reported on every enqueued message.
    func reported(_ outcome: KafkaBatchOutcome) -> Action {
        phase.withLock { phase -> Action in
            switch phase {
            case .inKafka(let batch):
                if outcome.enqueued == count && outcome.isFullyPersisted {
                    phase = .finished
                    return .persisted
                }
                if outcome.failures.contains(where: { $0.error?.isRefusedForGood == true }) {
                    phase = .finished
                    return .undeliverable
                }
                phase = .spooling(batch, report: outcome)
                return .spool(batch, inFlight: outcome.enqueued)
            case .spooling(let batch, _):
                phase = .spooling(batch, report: outcome)
                return .none
            case .spooled(let batch, let location):
                phase = .finished
                return .settle(outcome, batch, location)
            case .finished:
                return .none
            }
        }
    }

    /// The enqueue threw after `count` messages, or the threshold passed: spool it if still undecided.
    func needsSpooling() -> Action {
        phase.withLock { phase -> Action in
            guard case .inKafka(let batch) = phase else { return .none }
            phase = .spooling(batch, report: nil)
            return .spool(batch, inFlight: enqueued.load(ordering: .acquiring))
        }
    }

    /// The spool wrote the batch at `location` (or failed, for nil); returns Kafka's report if it came meanwhile.
    func spooled(at location: Spool.Location?) -> KafkaBatchOutcome? {
        phase.withLock { phase -> KafkaBatchOutcome? in
            guard case .spooling(let batch, let report) = phase else { return nil }
            if let location, report == nil {
                phase = .spooled(batch, location)
            } else {
                phase = .finished
            }
            return report
        }
    }

    /// Runs the caller's completion, the first time only.
    func answer(_ outcome: SpoolingDelivery.Outcome) {
        guard let completion = completion.withLock({ $0.take() }) else { return }
        completion(outcome)
    }
}
