import FlowmeterModels
import FlowmeterWire
import Foundation
import Gzip
import HTTPServer
import Hashing
import Kafka
import Logging
import Rollups
import Synchronization

/// `POST /v1/diagnostics`: authenticate, rate-limit, check media type, inflate, decode, authorize the app,
/// normalize, pseudonymize, publish, and answer once Kafka has the batch.
///
/// Runs on libmicrohttpd worker threads and never blocks one: a batch waiting for Kafka leaves its connection
/// suspended and is answered from the delivery completion or the deadline thread.
final class IngestHandler: Sendable {
    private let settings: CollectorConfiguration
    private let rateLimiter: RateLimiter
    private let hasher: InstallIDHasher
    private let producer: KafkaProducer?
    private let delivery: SpoolingDelivery?
    private let aggregator: RollupAggregator?
    private let recentBatches: RecentBatchIDs<[UInt8]>
    private let metrics: CollectorMetrics
    private let health: KafkaHealth
    private let logger: Logger
    private let deadlines: DeadlineQueue
    private let interners: InternerPool
    private let eventStorage = EventStoragePool()
    private let diagnosticCounters: DiagnosticSeriesCounters
    private let headers: [KafkaHeader]
    private let spoolHeaders: [SpoolRecord.Header]
    private let isStopping = Atomic<Bool>(false)

    init(
        configuration: CollectorConfiguration, hasher: InstallIDHasher, producer: KafkaProducer?,
        delivery: SpoolingDelivery?, aggregator: RollupAggregator?, metrics: CollectorMetrics, health: KafkaHealth,
        logger: Logger
    ) {
        self.settings = configuration
        self.delivery = delivery
        self.aggregator = aggregator
        self.rateLimiter = RateLimiter(defaultLimit: configuration.defaultRateLimit)
        self.hasher = hasher
        self.producer = producer
        self.recentBatches = RecentBatchIDs(retention: configuration.batchIDRetention)
        self.metrics = metrics
        self.diagnosticCounters = DiagnosticSeriesCounters(metrics: metrics)
        self.health = health
        self.logger = logger
        self.headers = KafkaHeader.json(schema: configuration.topics.events)
        self.spoolHeaders = headers.map { SpoolRecord.Header(name: $0.name, value: $0.value) }
        self.interners = InternerPool(capacity: max(1, configuration.threads))
        let unavailable = IngestRejection.unavailable(reason: .deadline)
        self.deadlines = DeadlineQueue { [metrics] batch in
            if batch.responder.respond(unavailable.response) {
                Self.count(batch, outcome: .unavailable)
                metrics.rejections.labels(unavailable.reason).increment()
                metrics.unavailableBatches.increment()
            }
        }
    }

    /// Starts the deadline thread.
    func start() {
        deadlines.start()
    }

    /// From now on every request gets 503; batches waiting for Kafka keep waiting.
    func stopIntake() {
        isStopping.store(true, ordering: .sequentiallyConsistent)
    }

    /// Answers every batch still waiting with 503 and stops the deadline thread.
    func stop() {
        deadlines.stop()
    }

    /// Handles one request; answers now or leaves the answer to the delivery path.
    func handle(_ request: HTTPRequest, _ responder: HTTPResponder) {
        do throws(IngestRejection) {
            try process(request, responder)
        } catch {
            reject(error, responder)
        }
    }

    private func reject(_ rejection: IngestRejection, _ responder: HTTPResponder) {
        guard responder.respond(rejection.response) else { return }
        metrics.rejections.labels(rejection.reason).increment()
        if case .unavailable = rejection {
            metrics.unavailableBatches.increment()
        } else {
            metrics.rejectedBatches.increment()
        }
    }

    private func process(_ request: HTTPRequest, _ responder: HTTPResponder) throws(IngestRejection) {
        guard !isStopping.load(ordering: .relaxed) else { throw .unavailable(reason: .shuttingDown) }
        // Only the header authenticates: a key in the query string is ignored, never accepted.
        let token = IngestKeys.bearerToken(fromAuthorization: request.headers["Authorization"])
        guard let token, let key = settings.keys.key(for: token) else { throw .unauthorized }
        if case .limited(let seconds) = rateLimiter.check(keyID: key.keyID, limit: key.rateLimit) {
            metrics.rateLimited.labels(key.keyID).increment()
            throw .rateLimited(retryAfterSeconds: seconds)
        }
        guard Self.isJSON(request.headers["Content-Type"]) else { throw .unsupportedContentType }
        let body = try inflate(request.body, encoding: request.headers["Content-Encoding"])
        let decoded: CompactBatch
        do {
            // One pass over the body: the decoder itself stops at the event past the limit.
            decoded = try interners.withInterner { interner throws(BatchDecodingError) in
                try FastBatchDecoder.decodeCompact(
                    body, maxEvents: settings.maxEventsPerBatch, interner: &interner, storage: eventStorage.take())
            }
        } catch  where error.code == .tooManyEvents {
            throw .tooManyEvents(limit: settings.maxEventsPerBatch)
        } catch {
            throw .invalidJSON(message: error.message, path: error.path)
        }
        let batch = decoded.header
        // At most maxEventsPerBatch: the decoder stopped at the one past it.
        let received = decoded.table.count + decoded.dropped.count
        guard key.mayWrite(batch.client.appID) else {
            countEvents(received, kind: "__undecoded__", outcome: "rejected_forbidden")
            throw .forbidden
        }

        let scopedID = batch.id.map { batch.client.appID + "/" + $0 }
        if let scopedID {
            switch recentBatches.begin(scopedID) {
            case .new: break
            case .inFlight:
                countEvents(received, kind: "__undecoded__", outcome: "unavailable")
                throw .unavailable(reason: .retryInFlight)
            case .completed(let answer):
                if responder.respond(.json(status: .accepted, answer)) {
                    countEvents(received, kind: "__undecoded__", outcome: "duplicate")
                    metrics.duplicateBatches.increment()
                }
                return
            }
        }
        if case .limited(let seconds) = rateLimiter.tryTake(received, keyID: key.keyID, limit: key.rateLimit) {
            if let scopedID { recentBatches.abandon(scopedID) }
            countEvents(received, kind: "__undecoded__", outcome: "rejected_rate_limited")
            metrics.rateLimited.labels(key.keyID).increment()
            throw .rateLimited(retryAfterSeconds: seconds)
        }
        publish(decoded, scopedID: scopedID, responder: responder)
    }

    private func publish(_ decoded: CompactBatch, scopedID: String?, responder: HTTPResponder) {
        let batch = decoded.header
        let receivedAt = Timestamp(Date())
        let normalized = Normalizer(
            maxAge: settings.maxEventAge, maxFutureSkew: settings.maxFutureSkew, receivedAt: receivedAt
        ).normalize(decoded)
        let app = metrics.appLabel(batch.client.appID)
        if let decodes = batch.decodes, decodes > 0 { metrics.decodes.labels(app).increment(by: UInt64(decodes)) }
        // An empty batch is always answered 202 without Kafka, so counting it here counts an accepted batch.
        if decoded.table.isEmpty && decoded.dropped.isEmpty { metrics.cleanBatches.labels(app).increment() }
        countEvents(decoded.dropped.count, kind: "__undecoded__", outcome: "dropped_malformed")
        for (kind, reason) in normalized.late {
            metrics.events.labels(metrics.kindLabel(kind), reason).increment()
        }
        let acceptedByKind = Self.countByKindLabel(normalized.accepted, metrics: metrics)
        let answer = AcceptedAnswer.body(accepted: normalized.accepted.count, diagnostics: normalized.diagnostics)
        let pending = PendingBatch(
            answer: answer, responder: responder, scopedID: scopedID, acceptedByKind: acceptedByKind,
            deadline: .now + settings.responseDeadline)

        let needsHash = producer != nil || aggregator != nil
        let installHash = needsHash ? batch.client.installID.map { hasher.pseudonym(for: $0) } : nil
        let rollup = aggregator.map { aggregator in
            RollupInput(
                aggregator: aggregator, decodes: batch.decodes, installHash: installHash, receivedAt: receivedAt,
                clockSkew: batch.sentAt.map { Self.duration(from: $0, to: receivedAt) } ?? .zero,
                droppedEvents: decoded.dropped.count + normalized.late.count,
                clientDiscarded: batch.clientReport?.totalEvents ?? 0)
        }

        guard let producer, !normalized.accepted.isEmpty else {
            // Nothing to publish (or --kafka none): the batch is as durable as it will get.
            let events = normalized.accepted
            recordDurable(events, client: batch.client, clientReport: batch.clientReport, rollup: rollup)
            eventStorage.recycle(events.storage)
            succeed(pending)
            return
        }

        let batchID = batch.id ?? UUID().uuidString
        let collector = settings.collectorID
        let topic = settings.topics.events
        let expected = normalized.accepted.count
        let events = normalized.accepted
        let positions = normalized.positions
        let client = batch.client
        let clientReport = batch.clientReport
        let isEnqueueAck = settings.ackMode == .enqueue
        // Every record written once, in place, into one block per batch: the producer reads keys and values from
        // it without copying, and the spool writes the same bytes if Kafka does not take the batch in time.
        var records = SpoolBatch(
            topic: topic, headers: spoolHeaders,
            appendedAt: receivedAt.secondsSinceEpoch * 1000 + Int64(receivedAt.nanoseconds / 1_000_000),
            records: expected, bytesPerRecord: 768)
        // The batch's own fields of every record (app, version, install hash, receipt, collector) and the app's
        // part of every key escaped once.
        let shared = EventRecordBatch(
            batchID: batchID, client: client, installHash: installHash, receivedAt: receivedAt, collector: collector)
        // Every string of the batch's table escaped once, the app's part of every key too.
        let scratch = eventStorage.takeScratch()
        let writer = CompactRecordWriter(
            table: events, shared: shared, keyPrefix: SeriesKey.AppPrefix(appID: client.appID),
            scratch: scratch)
        let compact = events.events
        for offset in compact.indices {
            let event = compact[offset]
            records.append(keyBound: writer.keyLength(of: event), valueBound: writer.maxLength(of: event)) { memory in
                writer.writeKey(of: event, into: memory)
            } value: { memory in
                writer.write(event: event, index: positions[offset], into: memory)
            }
        }
        // The records hold copies of the escaped bytes: the writer is done with its table.
        eventStorage.recycle(scratch)
        if let delivery, !isEnqueueAck {
            delivery.send(records, headers: headers) { [self] outcome in
                switch outcome {
                case .persisted, .spooled:
                    recordDurable(events, client: client, clientReport: clientReport, rollup: rollup)
                    succeed(pending)
                case .unavailable(let reason):
                    fail(pending, reason: reason)
                }
                eventStorage.recycle(events.storage)
            }
            deadlines.add(pending)
            return
        }
        health.enqueued()
        do {
            var enqueued = 0
            try producer.enqueueBorrowing(records, headers: headers, enqueued: &enqueued) { [self] outcome in
                let isDurable = outcome.enqueued == expected && outcome.isFullyPersisted
                if isDurable {
                    recordDurable(events, client: client, clientReport: clientReport, rollup: rollup)
                }
                eventStorage.recycle(events.storage)
                if isEnqueueAck {
                    if !isDurable {
                        logger.warning(
                            "batch answered at enqueue was not persisted",
                            ["failed": String(outcome.failures.count), "enqueued": String(outcome.enqueued)])
                    }
                    return
                }
                if isDurable {
                    succeed(pending)
                } else {
                    fail(pending, reason: outcome.enqueued < expected ? .queueFull : .deliveryFailed)
                }
            }
        } catch let error as KafkaError where error.code == .queueFull {
            fail(pending, reason: .queueFull)
            return
        } catch {
            logger.error("could not enqueue a batch", ["error": String(describing: error)])
            fail(pending, reason: .deliveryFailed)
            return
        }
        if isEnqueueAck {
            succeed(pending)
        } else {
            deadlines.add(pending)
        }
    }

    /// Counts a durable batch in the metrics and the rollups. With an aggregator, the diagnostics metric is counted
    /// as it records the events (each series holds its child); without one, by a lookup per event.
    private func recordDurable(
        _ events: EventTable, client: ClientInfo, clientReport: ClientReport?, rollup: RollupInput?
    ) {
        if let rollup {
            rollup.record(events, client: client, counters: diagnosticCounters)
        } else {
            metrics.recordDiagnostics(events, appID: client.appID, build: client.buildConfiguration)
        }
        metrics.recordClientReport(clientReport, appID: client.appID)
    }

    private func succeed(_ pending: PendingBatch) {
        if let scopedID = pending.scopedID { recentBatches.complete(scopedID, answer: pending.answer) }
        guard pending.responder.respond(.json(status: .accepted, pending.answer)) else { return }
        Self.count(pending, outcome: .accepted)
        metrics.acceptedBatches.increment()
    }

    private func fail(_ pending: PendingBatch, reason: IngestRejection.UnavailableReason) {
        if let scopedID = pending.scopedID { recentBatches.abandon(scopedID) }
        let rejection = IngestRejection.unavailable(reason: reason)
        guard pending.responder.respond(rejection.response) else { return }
        Self.count(pending, outcome: .unavailable)
        metrics.rejections.labels(rejection.reason).increment()
        metrics.unavailableBatches.increment()
    }

    /// How an accepted batch ended, for `flowmeter_events_total`'s `outcome` label.
    private enum Outcome {
        case accepted, unavailable
    }

    private static func count(_ pending: PendingBatch, outcome: Outcome) {
        for (counters, count) in pending.acceptedByKind {
            (outcome == .accepted ? counters.accepted : counters.unavailable).increment(by: count)
        }
    }

    private func countEvents(_ count: Int, kind: String, outcome: String) {
        guard count > 0 else { return }
        metrics.events.labels(kind, outcome).increment(by: UInt64(count))
    }

    /// Accepted events per kind label: counted by the kind's table entry (a batch's kinds are a few entries), each
    /// entry's counters resolved once; entries that share a label (two spellings, or `__other__`) add up.
    private static func countByKindLabel(
        _ table: EventTable, metrics: CollectorMetrics
    ) -> [(counters: KindOutcomeCounters, count: UInt64)] {
        // Each entry with the position of its first event, whose kind it is.
        var entries: [(entry: Int32, first: Int, count: UInt64)] = []
        // One allocation for the usual handful of kinds, not one per doubling.
        entries.reserveCapacity(8)
        var last = 0
        let events = table.events
        for position in events.indices {
            let entry = events[position].kind
            if last < entries.count && entries[last].entry == entry {
                entries[last].count += 1
                continue
            }
            if let found = entries.firstIndex(where: { $0.entry == entry }) {
                entries[found].count += 1
                last = found
            } else {
                last = entries.count
                entries.append((entry, position, 1))
            }
        }
        var byLabel: [(counters: KindOutcomeCounters, count: UInt64)] = []
        byLabel.reserveCapacity(entries.count)
        for (_, first, count) in entries {
            let counters = metrics.outcomeCounters(kind: table.kind(of: events[first]))
            if let same = byLabel.firstIndex(where: { $0.counters.accepted === counters.accepted }) {
                byLabel[same].count += count
            } else {
                byLabel.append((counters, count))
            }
        }
        return byLabel
    }

    /// What a durable batch adds to the rollups besides its events, captured before the publish.
    private struct RollupInput: Sendable {
        let aggregator: RollupAggregator
        let decodes: Int?
        let installHash: String?
        let receivedAt: Timestamp
        let clockSkew: Duration
        let droppedEvents: Int
        let clientDiscarded: Int

        func record(_ events: EventTable, client: ClientInfo, counters: DiagnosticSeriesCounters) {
            aggregator.record(
                events, client: client, decodes: decodes, installHash: installHash, receivedAt: receivedAt,
                clockSkew: clockSkew, droppedEvents: droppedEvents, clientDiscarded: clientDiscarded,
                counters: counters)
        }
    }

    /// `end - start` as a duration (the device clock's skew when `start` is the batch's `sentAt`).
    private static func duration(from start: Timestamp, to end: Timestamp) -> Duration {
        .seconds(end.secondsSinceEpoch &- start.secondsSinceEpoch)
            + .nanoseconds(Int64(end.nanoseconds) - Int64(start.nanoseconds))
    }

    private func inflate(_ body: [UInt8], encoding: String?) throws(IngestRejection) -> [UInt8] {
        guard let encoding else { return body }
        let coding = encoding.trimmingCharacters(in: .whitespaces).lowercased()
        guard !coding.isEmpty, coding != "identity" else { return body }
        guard let format = Gzip.Format(contentEncoding: coding) else { throw .unsupportedEncoding }
        do {
            return try Gzip.inflate(body, format: format, maxOutputBytes: settings.maxInflatedBytes)
        } catch {
            if error.code == .tooLarge { throw .inflatedTooLarge(limit: settings.maxInflatedBytes) }
            if error.code == .outOfMemory { throw .unavailable(reason: .deliveryFailed) }
            throw .corruptEncoding
        }
    }

    /// Whether a `Content-Type` value is `application/json`, with any parameters (such as `charset`).
    static func isJSON(_ contentType: String?) -> Bool {
        guard let contentType else { return false }
        // Compared as bytes because it runs on every request and clients commonly add `; charset=utf-8`, which
        // would otherwise cost a split, a trim and a lowercased copy.
        let isSpace = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        let bytes = contentType.utf8[...].drop(while: isSpace)
        var index = bytes.startIndex
        for expected in "application/json".utf8 {
            guard index < bytes.endIndex else { return false }
            let byte = bytes[index]
            let isLetter = expected >= UInt8(ascii: "a") && expected <= UInt8(ascii: "z")
            guard byte == expected || (isLetter && byte | 0x20 == expected) else { return false }
            index = bytes.index(after: index)
        }
        let rest = bytes[index...].drop(while: isSpace)
        return rest.isEmpty || rest.first == UInt8(ascii: ";")
    }
}
