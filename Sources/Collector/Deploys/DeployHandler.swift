import FlowmeterModels
import FlowmeterWire
import Foundation
import HTTPServer
import Kafka
import Rollups

/// `POST /v1/deploys` (docs/api.md#deploy-markers): an admin key records a deploy marker in the store (when the
/// collector has one) and publishes it to `flowmeter.deploys.v1` (key = service), answering 201 `{"id": "…"}` once both
/// are done.
///
/// 401 without a known key, 403 for an ingest key that is not an admin key, 415 for a non-JSON body, 400
/// `invalid_json` with the `path` of the missing or bad key, 503 when the store or Kafka fails. The checks, the store
/// write (off the HTTP worker) and the Kafka record are ``AdminWrites``'s; this route brings the marker's decoding.
final class DeployHandler: Sendable {
    private let writes: AdminWrites
    private let topic: String
    private let headers: [KafkaHeader]

    init(writes: AdminWrites, topic: String) {
        self.writes = writes
        self.topic = topic
        self.headers = KafkaHeader.json(schema: topic)
    }

    func handle(_ request: HTTPRequest, _ responder: HTTPResponder) {
        writes.handle(request, responder, route: .deploys, topic: topic, headers: headers) {
            request throws(IngestRejection) in
            let marker: DeployMarker
            do throws(RollupsError) {
                marker = try DeployMarker(jsonBytes: request.body)
            } catch {
                throw .invalidJSON(message: error.message, path: Self.invalidPath(error.message, request.body))
            }
            return AdminWrites.Write(
                key: Array(marker.service.utf8), value: marker.jsonBytes(), created: Self.createdBody(marker.id),
                store: { store in try store.recordDeploy(marker) })
        }
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
