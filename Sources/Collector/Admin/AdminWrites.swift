import FlowmeterModels
import HTTPServer
import Kafka
import Logging
import Metrics

/// An admin write route: what it is called in answers, logs and metrics.
enum AdminRoute: Sendable, Hashable {
    /// `POST /v1/deploys`.
    case deploys
    /// `POST /v1/manifests`.
    case manifests

    /// `Deploys`, `Manifests`: the subject of the 403's message.
    var title: String {
        switch self {
        case .deploys: "Deploys"
        case .manifests: "Manifests"
        }
    }

    /// What one request writes, for log lines and the Kafka path.
    var subject: RecordDelivery.Subject {
        switch self {
        case .deploys: .deployMarker
        case .manifests: .manifest
        }
    }
}

/// The `outcome` label of `flowmeter_deploy_markers_total` and `flowmeter_manifest_uploads_total`.
enum AdminOutcome: String, Sendable {
    /// Stored (with a store) and durable in Kafka or the spool (with Kafka): 201.
    case recorded
    /// Refused for the request itself: 401, 403, 413, 415, 400.
    case rejected
    /// The store or Kafka failed: 503.
    case failed
}

/// What deploys and manifests share (docs/api.md#deploy-markers, #capability-manifests): the admin-key check, the
/// 401/403/415 answers, the store write off the HTTP worker (``AdminWriteQueue``), the one Kafka record through
/// ``RecordDelivery`` and the 201; each route brings only its body's decoding and its answer.
///
/// Order: the key (401 without a known key, 403 for an ingest key), the media type (415), the body (400, or 413 for
/// a manifest), the store write (503 when it fails; nothing is published then), the Kafka record (503 when neither
/// Kafka nor the spool takes it), then 201. Every answer is counted under the route's `outcome` label once sent.
final class AdminWrites: Sendable {
    /// One decoded admin write: the Kafka record, the store write and the 201's body.
    struct Write: Sendable {
        /// The Kafka record's key (the marker's `service`, the manifest's `appID`).
        var key: [UInt8]
        /// The Kafka record's value.
        var value: [UInt8]
        /// The 201's JSON body.
        var created: [UInt8]
        /// The store write (blocking; runs on the write queue's thread).
        var store: @Sendable (any CollectorStore) throws -> Void
    }

    private let keys: IngestKeys
    private let delivery: RecordDelivery?
    private let store: (any CollectorStore)?
    private let queue: AdminWriteQueue
    private let metrics: CollectorMetrics
    private let logger: Logger

    init(
        keys: IngestKeys, delivery: RecordDelivery?, store: (any CollectorStore)?, queue: AdminWriteQueue,
        metrics: CollectorMetrics, logger: Logger
    ) {
        self.keys = keys
        self.delivery = delivery
        self.store = store
        self.queue = queue
        self.metrics = metrics
        self.logger = logger
    }

    /// Handles one admin request for `route` to `topic` (records carrying `headers`): checks it, decodes its body
    /// with `decode` and writes it; answers now when it is refused, otherwise from the write queue or Kafka.
    func handle(
        _ request: HTTPRequest, _ responder: HTTPResponder, route: AdminRoute, topic: String, headers: [KafkaHeader],
        decode: (HTTPRequest) throws(IngestRejection) -> Write
    ) {
        let write: Write
        do throws(IngestRejection) {
            try authorize(request, route: route)
            write = try decode(request)
        } catch {
            answer(responder, error.response, route: route, outcome: .rejected)
            return
        }
        guard let store else {
            publish(write, responder, route: route, topic: topic, headers: headers)
            return
        }
        let queued = queue.enqueue { [self] in
            do {
                try write.store(store)
            } catch {
                logger.error("could not store \(route.subject.noun)", ["error": String(describing: error)])
                answer(responder, IngestRejection.unavailableResponse, route: route, outcome: .failed)
                return
            }
            publish(write, responder, route: route, topic: topic, headers: headers)
        }
        if !queued {
            logger.error(
                "could not store \(route.subject.noun)",
                ["error": "\(queue.capacity) store writes are waiting already"])
            answer(responder, IngestRejection.unavailableResponse, route: route, outcome: .failed)
        }
    }

    /// The key and media-type checks every admin route makes, in this order.
    private func authorize(_ request: HTTPRequest, route: AdminRoute) throws(IngestRejection) {
        let token = IngestKeys.bearerToken(fromAuthorization: request.headers["Authorization"])
        guard keys.isAdmin(token) else {
            if let token, keys.key(for: token) != nil { throw .notAdmin(route) }
            throw .adminUnauthorized
        }
        if route == .manifests {
            let encoding =
                request.headers["Content-Encoding"]?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
            if !encoding.isEmpty && encoding != "identity" { throw .encodingNotTaken }
        }
        if let contentType = request.headers["Content-Type"], !IngestHandler.isJSON(contentType) {
            throw .unsupportedContentType
        }
    }

    /// Publishes the write's record and answers 201 once it is durable, 503 when it is not.
    private func publish(
        _ write: Write, _ responder: HTTPResponder, route: AdminRoute, topic: String, headers: [KafkaHeader]
    ) {
        let created = HTTPResponse.json(status: .created, write.created)
        guard let delivery else {
            answer(responder, created, route: route, outcome: .recorded)
            return
        }
        var record = SpoolBatch(
            topic: topic, headers: headers.map { SpoolRecord.Header(name: $0.name, value: $0.value) }, records: 1,
            bytesPerRecord: write.key.count + write.value.count)
        record.append(key: write.key[...], value: write.value[...])
        delivery.send(record, headers: headers, subject: route.subject) { [self] outcome in
            switch outcome {
            case .persisted, .spooled:
                answer(responder, created, route: route, outcome: .recorded)
            case .unavailable(let failure):
                logger.error(
                    "could not publish \(route.subject.noun)", ["error": failure.error ?? failure.reason.rawValue])
                answer(responder, IngestRejection.unavailableResponse, route: route, outcome: .failed)
            }
        }
    }

    private func answer(_ responder: HTTPResponder, _ response: HTTPResponse, route: AdminRoute, outcome: AdminOutcome)
    {
        guard responder.respond(response) else { return }
        let counter = route == .deploys ? metrics.deployMarkers : metrics.manifestUploads
        counter.labels(outcome.rawValue).increment()
    }
}
