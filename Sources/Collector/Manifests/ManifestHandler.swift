import FlowmeterModels
import FlowmeterWire
import Foundation
import HTTPServer
import Kafka

/// `POST /v1/manifests` (docs/api.md#capability-manifests): an admin key uploads one app build's capability manifest;
/// it is validated, stamped with the time it was taken (`uploadedAt`), recorded in the store (when the collector has
/// one) and published to `flowmeter.manifests.v1` (key = appID), so every sink's store gets it; 201 once both are done.
///
/// The same appID + appVersion + platform + build uploaded again replaces the earlier manifest. 401 without a known
/// key, 403 for an ingest key that is not an admin key, 415 for a body that is not plain JSON, 400 `invalid_json`
/// with the `path` of the bad field, 413 `too_large` for a manifest over ``ManifestLimits``, 503 when the store or
/// Kafka fails. The checks, the store write (off the HTTP worker) and the Kafka record are ``AdminWrites``'s; this
/// route brings the manifest's validation.
final class ManifestHandler: Sendable {
    private let writes: AdminWrites
    private let topic: String
    private let headers: [KafkaHeader]
    private let limits: ManifestLimits

    init(writes: AdminWrites, topic: String, limits: ManifestLimits = ManifestLimits()) {
        self.writes = writes
        self.topic = topic
        self.headers = KafkaHeader.json(schema: topic)
        self.limits = limits
    }

    func handle(_ request: HTTPRequest, _ responder: HTTPResponder) {
        writes.handle(request, responder, route: .manifests, topic: topic, headers: headers) {
            [limits] request throws(IngestRejection) in
            var manifest: CapabilityManifest
            do throws(ManifestError) {
                manifest = try CapabilityManifest(jsonBytes: request.body, limits: limits)
            } catch {
                throw error.code == .tooLarge
                    ? .manifestTooLarge(message: error.message, path: error.path)
                    : .invalidJSON(message: error.message, path: error.path)
            }
            // The collector's clock orders uploads: a later upload of the same build replaces an earlier one.
            manifest.uploadedAt = Timestamp(Date())
            let stored = manifest
            return AdminWrites.Write(
                key: Array(manifest.appID.utf8), value: manifest.jsonBytes(), created: Self.createdBody(manifest),
                store: { store in try store.recordManifest(stored) })
        }
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
