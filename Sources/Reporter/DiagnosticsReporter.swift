public import FlowmeterModels
public import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sends diagnostic batches to a Flowmeter collector, the way an app built on Flow-UI does.
///
/// Foundation only, so an iOS app can use it as it is. Each batch gets an id before its first attempt and keeps it on
/// retries, so the collector answers a retry after a lost answer without publishing the batch twice.
public struct DiagnosticsReporter: Sendable {
    /// The collector's base URL, such as `http://127.0.0.1:8080`.
    public var baseURL: URL
    /// The ingest key sent as `Authorization: Bearer …`.
    public var ingestKey: String
    /// How long one attempt may take.
    public var timeout: TimeInterval
    /// Compresses a body for `Content-Encoding: gzip`; nil sends it uncompressed.
    public var gzip: (@Sendable ([UInt8]) -> [UInt8])?
    private let session: URLSession

    /// Creates a reporter for the collector at `baseURL`.
    public init(
        baseURL: URL, ingestKey: String, timeout: TimeInterval = 10, gzip: (@Sendable ([UInt8]) -> [UInt8])? = nil
    ) {
        self.baseURL = baseURL
        self.ingestKey = ingestKey
        self.timeout = timeout
        self.gzip = gzip
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.httpMaximumConnectionsPerHost = 8
        self.session = URLSession(configuration: configuration)
    }

    /// Sends `batch` once; returns the collector's 202 answer or throws a `ReporterError` saying whether to retry.
    ///
    /// A batch without an id is given a fresh UUID first; pass the returned batch's id to retries by sending the same
    /// value again (see `send(_:attempts:)`).
    public func send(_ batch: DiagnosticBatch) async throws(ReporterError) -> IngestAnswer {
        let body: [UInt8]
        do {
            body = Array(try JSONEncoder().encode(batch))
        } catch {
            throw ReporterError(status: nil, code: "encoding_failed", message: "\(error)")
        }
        return try await send(body: body)
    }

    /// Sends `batch`, retrying retriable failures up to `attempts` times with the collector's `Retry-After` (or a
    /// doubling backoff from `initialBackoff`), always with the same batch id.
    public func send(
        _ batch: DiagnosticBatch, attempts: Int, initialBackoff: TimeInterval = 0.2
    ) async throws(ReporterError) -> IngestAnswer {
        var batch = batch
        if batch.id == nil { batch.id = UUID().uuidString }
        var backoff = initialBackoff
        var attempt = 1
        while true {
            do {
                return try await send(batch)
            } catch {
                guard error.isRetriable, attempt < attempts else { throw error }
                let wait = error.retryAfterSeconds ?? backoff
                try? await Task.sleep(for: .milliseconds(Int(wait * 1000)))
                backoff *= 2
                attempt += 1
            }
        }
    }

    /// Sends an already encoded batch body.
    public func send(body: [UInt8]) async throws(ReporterError) -> IngestAnswer {
        var request = URLRequest(url: baseURL.appendingPathComponent("v1/diagnostics"))
        request.httpMethod = "POST"
        request.setValue("Bearer \(ingestKey)", forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        if let gzip {
            request.setValue("gzip", forHTTPHeaderField: "Content-Encoding")
            request.httpBody = Data(gzip(body))
        } else {
            request.httpBody = Data(body)
        }
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await session.data(for: request)
        } catch {
            throw ReporterError(status: nil, code: "transport", message: error.localizedDescription)
        }
        guard let http = response as? HTTPURLResponse else {
            throw ReporterError(status: nil, code: "transport", message: "not an HTTP response")
        }
        if http.statusCode == 202, let answer = try? JSONDecoder().decode(IngestAnswer.self, from: data) {
            return answer
        }
        let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        throw ReporterError(
            status: http.statusCode, code: object?["error"] as? String ?? "http_\(http.statusCode)",
            message: object?["message"] as? String ?? "",
            retryAfterSeconds: (http.value(forHTTPHeaderField: "Retry-After")).flatMap(Double.init))
    }
}
