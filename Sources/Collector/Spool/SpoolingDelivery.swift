import Foundation
import Kafka
import Lifecycle
import Logging
import Synchronization

/// Delivers a batch durably: to Kafka, or to the disk spool when Kafka does not take it within `threshold`. Behind
/// every 202 (and every rollup flush) while the collector has a spool.
///
/// A batch goes straight to the spool while the spool holds anything not yet delivered (so a series never
/// overtakes its own spooled records) or while Kafka looks down (``KafkaHealth``). Otherwise it is enqueued to
/// Kafka and watched: a full success within the threshold is `persisted`; a retriable failure, a full queue, or the
/// threshold passing spools it, and the records still in flight are settled later by their own delivery reports,
/// so each record has one live delivery at a time. `SpoolReplay` delivers what the spool holds. A permanent Kafka
/// error is `unavailable` (503), as without a spool: spooling could not help it.
///
/// The threshold thread (`spool-threshold`, a ``DeadlineWatch``) looks at the oldest waiting batch every 20 ms;
/// batches all wait the same threshold, so arrival order is deadline order.
final class SpoolingDelivery: Sendable {
    /// How a batch ended.
    enum Outcome: Sendable, Hashable {
        /// Kafka persisted every record.
        case persisted
        /// The spool holds it durably; the replay delivers it.
        case spooled
        /// Neither took it: the caller answers 503.
        case unavailable(IngestRejection.UnavailableReason)
    }

    /// The spool.
    let spool: Spool
    /// How long a batch may wait for Kafka before it is spooled.
    let threshold: Duration
    private let producer: KafkaProducer
    private let health: KafkaHealth
    private let metrics: CollectorMetrics
    private let waiting: DeadlineWatch<SpoolingTicket>
    private let isStopped = Atomic<Bool>(false)

    init(spool: Spool, producer: KafkaProducer, health: KafkaHealth, metrics: CollectorMetrics, threshold: Duration) {
        self.spool = spool
        self.producer = producer
        self.health = health
        self.metrics = metrics
        self.threshold = threshold
        waiting = DeadlineWatch(named: "spool-threshold", deadline: { $0.deadline }, isSettled: { !$0.isWaiting })
    }

    /// Whether a batch arriving now would go to the spool and find it full: the spool refused a batch for room and
    /// none was freed since, and new batches go to the spool (it holds undelivered records, or Kafka looks down).
    /// The ingest admission answers such a batch 503 from its headers alone.
    var isRefusingForRoom: Bool {
        spool.isFull && (spool.isEngaged || !health.isUp)
    }

    /// Starts the threshold thread.
    func start() {
        waiting.start { [self] ticket in spoolIfWaiting(ticket) }
    }

    /// Delivers `batch` (records with `headers`, the Kafka form of the batch's own) and calls `completion` once:
    /// on the producer's poll thread, the spool's writer thread, the threshold thread, or the caller's.
    func send(
        _ batch: SpoolBatch, headers: [KafkaHeader], completion: @escaping @Sendable (Outcome) -> Void
    ) {
        guard !batch.isEmpty else {
            completion(.persisted)
            return
        }
        if spool.isEngaged || !health.isUp || isStopped.load(ordering: .relaxed) {
            spool.append(batch) { [metrics] result in
                switch result {
                case .success:
                    completion(.spooled)
                case .failure(let error):
                    metrics.spoolRefused.labels(error.code == .spoolFull ? "full" : "write_failed").increment()
                    completion(.unavailable(error.code == .spoolFull ? .spoolFull : .spoolFailed))
                }
            }
            return
        }
        let ticket = SpoolingTicket(batch: batch, deadline: .now + threshold, completion: completion)
        health.enqueued()
        var enqueued = 0
        do {
            try producer.enqueueBorrowing(batch, headers: headers, enqueued: &enqueued) { [self] outcome in
                act(ticket.reported(outcome), ticket)
            }
        } catch {
            // A full queue (or a producer being rebuilt): what was enqueued stays in flight, the rest waits on disk.
            ticket.enqueued(enqueued)
            act(ticket.needsSpooling(), ticket)
            return
        }
        ticket.enqueued(enqueued)
        if !waiting.add(ticket) { spoolIfWaiting(ticket) }
    }

    /// Spools every batch still waiting for Kafka now, and waits (at most `timeout`) until the spool has them.
    /// New batches go straight to the spool from now on. For the shutdown, before the producer is flushed.
    func spoolWaiting(timeout: Duration) async {
        isStopped.store(true, ordering: .releasing)
        let tickets = waiting.stop()
        for ticket in tickets { spoolIfWaiting(ticket) }
        await waiting.join()
        let deadline = ContinuousClock.now + timeout
        // Spooling tickets finish on the writer thread; a short poll covers the one group commit they wait for (a
        // cancelled task, past its group's bound, stops waiting).
        while tickets.contains(where: \.isUndecided) && ContinuousClock.now < deadline {
            do { try await Task.sleep(for: .milliseconds(10)) } catch { return }
        }
    }

    private func spoolIfWaiting(_ ticket: SpoolingTicket) {
        act(ticket.needsSpooling(), ticket)
    }

    private func act(_ action: SpoolingTicket.Action, _ ticket: SpoolingTicket) {
        switch action {
        case .none:
            return
        case .persisted:
            ticket.answer(.persisted)
        case .undeliverable:
            ticket.answer(.unavailable(.deliveryFailed))
        case .spool(let batch, let inFlight):
            spool.append(batch, inFlight: inFlight) { [self] result in
                switch result {
                case .success(let location):
                    if let report = ticket.spooled(at: location) { settle(report, of: batch, at: location) }
                    ticket.answer(.spooled)
                case .failure(let error):
                    _ = ticket.spooled(at: nil)
                    metrics.spoolRefused.labels(error.code == .spoolFull ? "full" : "write_failed").increment()
                    ticket.answer(.unavailable(error.code == .spoolFull ? .spoolFull : .spoolFailed))
                }
            }
        case .settle(let report, let batch, let location):
            settle(report, of: batch, at: location)
        }
    }

    /// Settles the spooled records of `batch` that its first send reported on: persisted ones are done, failed
    /// ones go to the replay (counted), ones Kafka refused for good go to the dead-letter segment. Records never
    /// enqueued are the replay's.
    private func settle(_ report: KafkaBatchOutcome, of batch: SpoolBatch, at location: Spool.Location) {
        if report.persisted > 0 { spool.acknowledge([location.segment: report.persisted]) }
        var retries: [Spool.Location] = []
        var refused: [Spool.Location] = []
        for failure in report.failures {
            let spooled = Spool.Location(
                segment: location.segment, offset: location.offset + batch.frames[failure.index].start)
            if let error = failure.error, error.isRefusedForGood {
                refused.append(spooled)
                continue
            }
            retries.append(spooled)
            metrics.countRequeue(failure.error)
        }
        let error = report.failures.first { $0.error?.isRefusedForGood == true }?.error
        spool.deadLetter(refused, error: error.map { String(describing: $0) } ?? "")
        spool.requeue(retries)
    }
}
