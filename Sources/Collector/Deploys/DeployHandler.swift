import FlowmeterModels
import FlowmeterWire
import Foundation
import HTTPServer
import Kafka
import Logging
import Rollups

/// `POST /v1/deploys` (docs/api.md#deploy-markers): an admin key records a deploy marker in the store (when the
/// collector has one) and publishes it to `flowmeter.deploys.v1` (key = service), answering 201 `{"id": "…"}` once both
/// are done.
///
/// 401 without a known key, 403 for an ingest key that is not an admin key, 415 for a non-JSON body, 400
/// `invalid_json` with the `path` of the missing or bad key, 503 when the store or Kafka fails. Deploys are rare: the
/// store write runs on the HTTP worker; the Kafka answer arrives on the producer's thread (the server's response
/// deadline bounds the wait).
final class DeployHandler: Sendable {
    private let keys: IngestKeys
    private let producer: KafkaProducer?
    private let store: (any CollectorStore)?
    private let topic: String
    private let headers: [KafkaHeader]
    private let metrics: CollectorMetrics
    private let logger: Logger

    init(
        keys: IngestKeys, producer: KafkaProducer?, store: (any CollectorStore)?, topic: String,
        metrics: CollectorMetrics, logger: Logger
    ) {
        self.keys = keys
        self.producer = producer
        self.store = store
        self.topic = topic
        self.headers = KafkaHeader.json(schema: topic)
        self.metrics = metrics
        self.logger = logger
    }

    func handle(_ request: HTTPRequest, _ responder: HTTPResponder) {
        let token = IngestKeys.bearerToken(fromAuthorization: request.headers["Authorization"])
        guard keys.isAdmin(token) else {
            if let token, keys.key(for: token) != nil {
                answer(
                    responder, .error(status: .forbidden, code: "forbidden", message: "Deploys need an admin key."),
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
        if let contentType = request.headers["Content-Type"], !IngestHandler.isJSON(contentType) {
            answer(
                responder,
                .error(
                    status: .unsupportedMediaType, code: "unsupported_media_type",
                    message: "Content-Type must be application/json."),
                outcome: "rejected")
            return
        }
        let marker: DeployMarker
        do {
            marker = try DeployMarker(jsonBytes: request.body)
        } catch {
            answer(
                responder,
                .error(
                    status: .badRequest, code: "invalid_json", message: error.message,
                    path: Self.invalidPath(error.message, request.body)),
                outcome: "rejected")
            return
        }
        if let store {
            do {
                try store.recordDeploy(marker)
            } catch {
                logger.error("could not store a deploy marker", ["error": String(describing: error)])
                answer(responder, IngestRejection.unavailableResponse, outcome: "failed")
                return
            }
        }
        let created = HTTPResponse.json(status: .created, Self.createdBody(marker.id))
        guard let producer else {
            answer(responder, created, outcome: "recorded")
            return
        }
        do {
            try producer.enqueueBatch(
                capacity: 1,
                completion: { [self] outcome in
                    if outcome.enqueued == 1 && outcome.isFullyPersisted {
                        answer(responder, created, outcome: "recorded")
                    } else {
                        logger.error(
                            "could not publish a deploy marker",
                            ["error": outcome.failures.first?.error.map { String(describing: $0) } ?? "not enqueued"])
                        answer(responder, IngestRejection.unavailableResponse, outcome: "failed")
                    }
                }
            ) { writer in
                try writer.append(
                    topic: topic, key: Array(marker.service.utf8), value: marker.jsonBytes(), headers: headers)
            }
        } catch {
            logger.error("could not enqueue a deploy marker", ["error": String(describing: error)])
            answer(responder, IngestRejection.unavailableResponse, outcome: "failed")
        }
    }

    private func answer(_ responder: HTTPResponder, _ response: HTTPResponse, outcome: String) {
        if responder.respond(response) { metrics.deployMarkers.labels(outcome).increment() }
    }

    private static func createdBody(_ id: String) -> [UInt8] {
        var body: [UInt8] = Array(#"{"id":"#.utf8)
        JSONString.append(id, to: &body)
        body.append(UInt8(ascii: "}"))
        return body
    }

    /// The `path` of a 400 for a bad marker: the first required key that is missing or not a non-empty string, else
    /// the key the decoder's message names, else empty.
    private static func invalidPath(_ message: String, _ body: [UInt8]) -> String {
        var path = ""
        if let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] {
            for key in ["service", "version", "finishedAt"] {
                guard let value = object[key] as? String, !value.isEmpty else {
                    path = key
                    break
                }
            }
            if path.isEmpty, let quoted = message.split(separator: "'").dropFirst().first {
                path = String(quoted)
            } else if path.isEmpty {
                path =
                    ["startedAt", "finishedAt", "environment", "commit", "url", "id"].first {
                        message.contains($0)
                    } ?? ""
            }
        }
        return path
    }
}
