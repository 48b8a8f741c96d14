import FlowmeterModels
import FlowmeterWire
import Foundation
import Gzip
import HTTPServer
import Hashing
import Kafka
import Logging
import Synchronization

/// `POST /v1/diagnostics`: authenticate, rate-limit, check media type, inflate, decode, authorize the app,
/// normalize, pseudonymize, publish, and answer once Kafka has the batch.
///
/// Runs on libmicrohttpd worker threads and never blocks one: a batch waiting for Kafka leaves its connection
/// suspended and is answered from the delivery completion or the deadline thread.
final class IngestHandler: Sendable {
    let settings: CollectorConfiguration
    let rateLimiter: RateLimiter
    private let hasher: InstallIDHasher
    /// The one path to Kafka (nil without Kafka).
    let delivery: RecordDelivery?
    private let handoff: (any BatchRecordHandoff)?
    private let recentBatches: RecentBatchIDs<[UInt8]>
    let metrics: CollectorMetrics
    private let logger: Logger
    /// The ingest keys by `keyID`, for requests the admission check already named (each ID held by one key only).
    private let keysByID: [String: IngestKeys.Key]
    private let deadlines: DeadlineQueue
    private let interners: InternerPool
    private let eventStorage = EventStoragePool()
    private let isStopping = Atomic<Bool>(false)

    init(
        configuration: CollectorConfiguration, hasher: InstallIDHasher, delivery: RecordDelivery?,
        handoff: (any BatchRecordHandoff)?, metrics: CollectorMetrics, logger: Logger
    ) {
        self.settings = configuration
        self.delivery = delivery
        self.handoff = handoff
        self.rateLimiter = RateLimiter(defaultLimit: configuration.defaultRateLimit)
        self.hasher = hasher
        // Two keys whose digests share their first 4 bytes share an ID: such a key is looked up by its digest.
        let byID = Dictionary(grouping: configuration.keys.keys, by: \.keyID)
        self.keysByID = byID.compactMapValues { $0.count == 1 ? $0[0] : nil }
        self.recentBatches = RecentBatchIDs(
            retention: configuration.batchIDRetention, capacity: Self.maxRememberedBatchIDs,
            maxAnswerBytes: Self.maxRememberedAnswerBytes, answerBytes: { $0.count + 32 })
        self.metrics = metrics
        self.logger = logger
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
        guard let key = key(of: request) else { throw .unauthorized }
        if case .limited(let seconds) = rateLimiter.check(keyID: key.keyID, limit: key.rateLimit) {
            metrics.rateLimited.labels(key.keyID).increment()
            throw .rateLimited(retryAfterSeconds: seconds)
        }
        // Every answer from here on costs the key what the request made the collector do (docs/collector.md, "What
        // one key can cost"): an accepted batch takes its tokens below; any other answer is charged on the way out.
        var cost = RequestCost(bodyBytes: request.body.count)
        defer {
            if !cost.isPaid { rateLimiter.charge(cost.units, keyID: key.keyID, limit: key.rateLimit) }
        }
        guard Self.isJSON(request.headers["Content-Type"]) else { throw .unsupportedContentType }
        let body = try inflate(request.body, encoding: request.headers["Content-Encoding"])
        cost.bodyBytes = max(cost.bodyBytes, body.count)
        let decoded: CompactBatch
        do {
            // One pass over the body: the decoder itself stops at the event past the limit.
            decoded = try interners.withInterner { interner throws(BatchDecodingError) in
                try FastBatchDecoder.decodeCompact(
                    body, maxEvents: settings.maxEventsPerBatch, interner: &interner, storage: eventStorage.take())
            }
        } catch  where error.code == .tooManyEvents {
            cost.events = settings.maxEventsPerBatch + 1
            throw .tooManyEvents(limit: settings.maxEventsPerBatch)
        } catch {
            throw .invalidJSON(message: error.message, path: error.path)
        }
        let batch = decoded.header
        // At most maxEventsPerBatch: the decoder stopped at the one past it.
        let received = decoded.table.count + decoded.dropped.count
        cost.events = received
        guard key.mayWrite(batch.client.appID) else {
            countEvents(received, kind: "__undecoded__", outcome: .rejectedForbidden)
            throw .forbidden
        }

        let scopedID = batch.id.map { batch.client.appID + "/" + $0 }
        if let scopedID {
            switch recentBatches.begin(scopedID) {
            case .new: break
            case .inFlight:
                countEvents(received, kind: "__undecoded__", outcome: .unavailable)
                throw .unavailable(reason: .retryInFlight)
            case .completed(let answer):
                if responder.respond(.json(status: .accepted, answer)) {
                    countEvents(received, kind: "__undecoded__", outcome: .duplicate)
                    metrics.duplicateBatches.increment()
                }
                return
            }
        }
        if case .limited(let seconds) = rateLimiter.tryTake(cost.units, keyID: key.keyID, limit: key.rateLimit) {
            if let scopedID { recentBatches.abandon(scopedID) }
            countEvents(received, kind: "__undecoded__", outcome: .rejectedRateLimited)
            metrics.rateLimited.labels(key.keyID).increment()
            throw .rateLimited(retryAfterSeconds: seconds)
        }
        cost.isPaid = true
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
        // A batch without events: its record carries only its decodes and client report.
        if decoded.table.isEmpty && decoded.dropped.isEmpty { metrics.cleanBatches.labels(app).increment() }
        countEvents(decoded.dropped.count, kind: "__undecoded__", outcome: .droppedMalformed)
        for (kind, outcome) in normalized.late {
            metrics.events.labels(metrics.kindLabel(kind), outcome.rawValue).increment()
        }
        let acceptedByKind = Self.countByKindLabel(normalized.accepted, metrics: metrics)
        let answer = AcceptedAnswer.body(accepted: normalized.accepted.count, diagnostics: normalized.diagnostics)
        // What a retry is answered from memory is bounded: the counts and the first few diagnostics.
        let storedAnswer =
            scopedID == nil || normalized.diagnostics.isEmpty
            ? nil : AcceptedAnswer.stored(accepted: normalized.accepted.count, diagnostics: normalized.diagnostics)
        let pending = PendingBatch(
            answer: answer, storedAnswer: storedAnswer, responder: responder, scopedID: scopedID,
            acceptedByKind: acceptedByKind,
            deadline: .now + settings.responseDeadline)

        let needsHash = delivery != nil || handoff != nil
        let installHash = needsHash ? batch.client.installID.map { hasher.pseudonym(for: $0) } : nil
        let events = normalized.accepted
        let client = batch.client
        let clientReport = batch.clientReport
        guard delivery != nil || handoff != nil else {
            // No Kafka and no store: there is nowhere to write the batch, only the metrics count it.
            recordDurable(events, client: client, clientReport: clientReport)
            eventStorage.recycle(events.storage)
            succeed(pending)
            return
        }

        var fields = client
        fields.installID = nil
        let skew = batch.sentAt.map { Self.duration(from: $0, to: receivedAt) } ?? .zero
        let record = BatchRecordWriter.Batch(
            batchID: batch.id ?? UUID().uuidString, client: fields, installHash: installHash, decodes: batch.decodes,
            clientReport: clientReport, receivedAt: receivedAt, skewMillis: Self.milliseconds(skew),
            collector: settings.collectorID, dropped: decoded.dropped.count + normalized.late.count)
        let scratch = eventStorage.takeScratch()
        let writer = BatchRecordWriter(
            batch: record, table: events, positions: normalized.positions, maxRecordBytes: settings.maxRecordBytes,
            scratch: scratch)
        let headers = Self.headers(topic: settings.topics.batches, client: client, events: events.count)
        // Every part written once, in place, into one block: the producer reads keys and values from it without
        // copying, and the spool writes the same bytes if Kafka does not take the batch in time.
        var records = SpoolBatch(
            topic: settings.topics.batches, headers: headers.map { SpoolRecord.Header(name: $0.name, value: $0.value) },
            appendedAt: receivedAt.secondsSinceEpoch * 1000 + Int64(receivedAt.nanoseconds / 1_000_000),
            records: writer.parts.count, bytesPerRecord: writer.maxLength(part: 0))
        let key = writer.keyBytes
        for part in writer.parts.indices {
            records.append(keyBound: key.count, valueBound: writer.maxLength(part: part)) { memory in
                memory.copyBytes(from: key)
                return key.count
            } value: { memory in
                writer.write(part: part, into: memory)
            }
        }
        // The records hold copies of the escaped bytes: the writer is done with its table.
        eventStorage.recycle(scratch)

        guard let delivery else {
            // --kafka none: the in-process sink takes the records; as durable as the process.
            handoff?.take((0..<records.count).map { Array(records.value($0)) })
            recordDurable(events, client: client, clientReport: clientReport)
            eventStorage.recycle(events.storage)
            succeed(pending)
            return
        }
        if settings.ackMode == .enqueue {
            let failure = delivery.enqueue(records, headers: headers, subject: .batch) {
                [self] isDurable, outcome in
                if isDurable {
                    recordDurable(events, client: client, clientReport: clientReport)
                } else {
                    logger.warning(
                        "batch answered at enqueue was not persisted",
                        ["failed": String(outcome.failures.count), "enqueued": String(outcome.enqueued)])
                }
                eventStorage.recycle(events.storage)
            }
            if let failure {
                fail(pending, reason: failure.reason)
            } else {
                succeed(pending)
            }
            return
        }
        delivery.send(records, headers: headers, subject: .batch) { [self] outcome in
            switch outcome {
            case .persisted, .spooled:
                recordDurable(events, client: client, clientReport: clientReport)
                succeed(pending)
            case .unavailable(let failure):
                fail(pending, reason: failure.reason)
            }
            eventStorage.recycle(events.storage)
        }
        deadlines.add(pending)
    }

    /// The headers of a batch record (docs/api.md#kafka-topics): content type and schema, and the app, version,
    /// platform and event count, so a consumer can route without parsing.
    private static func headers(topic: String, client: ClientInfo, events: Int) -> [KafkaHeader] {
        KafkaHeader.json(schema: topic) + [
            KafkaHeader(name: "app-id", value: Array(client.appID.utf8)),
            KafkaHeader(name: "app-version", value: Array(client.appVersion.utf8)),
            KafkaHeader(name: "platform", value: Array(client.platform.utf8)),
            KafkaHeader(name: "events", value: Array(String(events).utf8)),
        ]
    }

    /// Counts a durable batch in the metrics (the store's counts are the sink's, from the log).
    private func recordDurable(_ events: EventTable, client: ClientInfo, clientReport: ClientReport?) {
        metrics.recordDiagnostics(events, appID: client.appID, build: client.buildConfiguration)
        metrics.recordClientReport(clientReport, appID: client.appID)
    }

    private func succeed(_ pending: PendingBatch) {
        if let scopedID = pending.scopedID { recentBatches.complete(scopedID, answer: pending.storedAnswer) }
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

    /// Counts an accepted batch's events under how it ended: ``EventOutcome/accepted`` or
    /// ``EventOutcome/unavailable``.
    private static func count(_ pending: PendingBatch, outcome: EventOutcome) {
        for (counters, count) in pending.acceptedByKind {
            (outcome == .accepted ? counters.accepted : counters.unavailable).increment(by: count)
        }
    }

    private func countEvents(_ count: Int, kind: String, outcome: EventOutcome) {
        guard count > 0 else { return }
        metrics.events.labels(kind, outcome.rawValue).increment(by: UInt64(count))
    }

    /// The ingest key of `request`: the one the admission check named (its digest taken once, before the body was
    /// read), or for a request that did not pass the check (handed over in process) the one its bearer token is.
    /// Only the header authenticates: a key in the query string is ignored, never accepted.
    private func key(of request: HTTPRequest) -> IngestKeys.Key? {
        if let admitted = request.admittedClient, let key = keysByID[admitted] { return key }
        let token = IngestKeys.bearerToken(fromAuthorization: request.headers["Authorization"])
        return token.flatMap { settings.keys.key(for: $0) }
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

    /// `end - start` as a duration (the device clock's skew when `start` is the batch's `sentAt`).
    private static func duration(from start: Timestamp, to end: Timestamp) -> Duration {
        .seconds(end.secondsSinceEpoch &- start.secondsSinceEpoch)
            + .nanoseconds(Int64(end.nanoseconds) - Int64(start.nanoseconds))
    }

    /// `duration` in whole milliseconds, saturating.
    private static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (product, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        guard !overflow else { return seconds < 0 ? .min / 2 : .max / 2 }
        return product.addingReportingOverflow(attoseconds / 1_000_000_000_000_000).partialValue
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
