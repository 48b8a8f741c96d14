import FlowmeterModels
import FlowmeterWire
import Foundation
import HTTPServer
import Kafka
import Logging

/// `POST /v1/manifests` (docs/api.md#capability-manifests): an admin key uploads one app build's capability manifest;
/// it is validated, stamped with the time it was taken (`uploadedAt`), recorded in the store (when the collector has
/// one) and published to `flowmeter.manifests.v1` (key = appID), so every sink's store gets it; 201 once both are done.
///
/// The same appID + appVersion + platform + build uploaded again replaces the earlier manifest. 401 without a known
/// key, 403 for an ingest key that is not an admin key, 415 for a body that is not plain JSON, 400 `invalid_json`
/// with the `path` of the bad field, 413 `too_large` for a manifest over ``ManifestLimits``, 503 when the store or
/// Kafka fails. Like deploys, uploads are rare: the store write runs on the HTTP worker, the Kafka answer arrives on
/// the producer's thread.
final class ManifestHandler: Sendable {
    private let keys: IngestKeys
    private let producer: KafkaProducer?
    private let store: (any CollectorStore)?
    private let topic: String
    private let headers: [KafkaHeader]
    private let limits: ManifestLimits
    private let metrics: CollectorMetrics
    private let logger: Logger

    init(
        keys: IngestKeys, producer: KafkaProducer?, store: (any CollectorStore)?, topic: String,
        limits: ManifestLimits = ManifestLimits(), metrics: CollectorMetrics, logger: Logger
    ) {
        self.keys = keys
        self.producer = producer
        self.store = store
        self.topic = topic
        self.headers = KafkaHeader.json(schema: topic)
        self.limits = limits
        self.metrics = metrics
        self.logger = logger
    }

    func handle(_ request: HTTPRequest, _ responder: HTTPResponder) {
        let token = IngestKeys.bearerToken(fromAuthorization: request.headers["Authorization"])
        guard keys.isAdmin(token) else {
            if let token, keys.key(for: token) != nil {
                answer(
                    responder, .error(status: .forbidden, code: "forbidden", message: "Manifests need an admin key."),
                    outcome: "rejected")
            } else {
                answer(
                    responder,
                    .error(
                        status: .unauthorized, code: "unauthorized",
                        message: "Send an admin key as 'Authorization: Bearer <key>'.",
                        headers: ["WWW-Authenticate": "Bearer"]),
                    outcome: "rejected")
            }
            return
        }
        let encoding = request.headers["Content-Encoding"]?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
        if !encoding.isEmpty && encoding != "identity" {
            answer(
                responder,
                .error(
                    status: .unsupportedMediaType, code: "unsupported_media_type",
                    message: "Manifests are sent uncompressed; Content-Encoding is not supported."),
                outcome: "rejected")
            return
        }
        if let contentType = request.headers["Content-Type"], !IngestHandler.isJSON(contentType) {
            answer(
                responder,
                .error(
                    status: .unsupportedMediaType, code: "unsupported_media_type",
                    message: "Content-Type must be application/json."),
                outcome: "rejected")
            return
        }
        var manifest: CapabilityManifest
        do {
            manifest = try CapabilityManifest(jsonBytes: request.body, limits: limits)
        } catch {
            answer(
                responder,
                .error(
                    status: error.code == .tooLarge ? .contentTooLarge : .badRequest,
                    code: error.code == .tooLarge ? "too_large" : "invalid_json", message: error.message,
                    path: error.path),
                outcome: "rejected")
            return
        }
        // The collector's clock orders uploads: a later upload of the same build replaces an earlier one.
        manifest.uploadedAt = Timestamp(Date())
        if let store {
            do {
                try store.recordManifest(manifest)
            } catch {
                logger.error("could not store a manifest", ["error": String(describing: error)])
                answer(responder, IngestRejection.unavailableResponse, outcome: "failed")
                return
            }
        }
        let created = HTTPResponse.json(status: .created, Self.createdBody(manifest))
        guard let producer else {
            answer(responder, created, outcome: "recorded")
            return
        }
        let value = manifest.jsonBytes()
        do {
            try producer.enqueueBatch(
                capacity: 1,
                completion: { [self] outcome in
                    if outcome.enqueued == 1 && outcome.isFullyPersisted {
                        answer(responder, created, outcome: "recorded")
                    } else {
                        logger.error(
                            "could not publish a manifest",
                            ["error": outcome.failures.first?.error.map { String(describing: $0) } ?? "not enqueued"])
                        answer(responder, IngestRejection.unavailableResponse, outcome: "failed")
                    }
                }
            ) { writer in
                try writer.append(topic: topic, key: Array(manifest.appID.utf8), value: value, headers: headers)
            }
        } catch {
            logger.error("could not enqueue a manifest", ["error": String(describing: error)])
            answer(responder, IngestRejection.unavailableResponse, outcome: "failed")
        }
    }

    private func answer(_ responder: HTTPResponder, _ response: HTTPResponse, outcome: String) {
        if responder.respond(response) { metrics.manifestUploads.labels(outcome).increment() }
    }

    /// `{"appID", "appVersion", "platform", "build", "types", "uploadedAt"}`: which build was recorded, with how many
    /// types.
    private static func createdBody(_ manifest: CapabilityManifest) -> [UInt8] {
        var body: [UInt8] = Array(#"{"appID":"#.utf8)
        JSONString.append(manifest.appID, to: &body)
        body.append(contentsOf: #","appVersion":"#.utf8)
        JSONString.append(manifest.appVersion, to: &body)
        body.append(contentsOf: #","platform":"#.utf8)
        JSONString.append(manifest.platform, to: &body)
        body.append(contentsOf: #","build":"#.utf8)
        if let build = manifest.build {
            JSONString.append(build, to: &body)
        } else {
            body.append(contentsOf: "null".utf8)
        }
        body.append(contentsOf: #","types":\#(manifest.types.count),"uploadedAt":"#.utf8)
        JSONString.append(manifest.uploadedAt?.rfc3339String ?? "", to: &body)
        body.append(UInt8(ascii: "}"))
        return body
    }
}
