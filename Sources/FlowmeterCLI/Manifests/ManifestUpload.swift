import FlowmeterModels
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Posts one capability manifest to a collector's `POST /v1/manifests`, as a build pipeline does.
struct ManifestUpload: Sendable {
    /// What the collector answered.
    struct Answer: Sendable {
        var status: Int
        /// `error` of a JSON error body (`invalid_json`, `too_large`, `unauthorized`, …), nil on 201.
        var error: String?
        /// `message` of a JSON error body, or the body itself.
        var message: String
        /// `path` of a 400 body.
        var path: String?
    }

    /// The collector's base URL, such as `https://diagnostics.example.com`.
    var collector: URL
    /// An admin key (the keys file's `adminKeys`, docs/api.md#keys-file).
    var adminKey: String
    /// How long the request may take.
    var timeout: TimeInterval = 30

    /// Sends `body` once; throws only when no answer came.
    func send(_ body: [UInt8]) async throws -> Answer {
        var request = URLRequest(url: collector.appendingPathComponent("v1/manifests"))
        request.httpMethod = "POST"
        request.timeoutInterval = timeout
        request.setValue("Bearer \(adminKey)", forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(body)
        let session = URLSession(configuration: .ephemeral)
        defer { session.finishTasksAndInvalidate() }
        let (data, response) = try await session.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        return Answer(
            status: status, error: status == 201 ? nil : object?["error"] as? String ?? "http_\(status)",
            message: object?["message"] as? String ?? String(decoding: data.prefix(512), as: UTF8.self),
            path: object?["path"] as? String)
    }
}
