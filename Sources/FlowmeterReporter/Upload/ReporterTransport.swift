public import Foundation

/// Carries one upload to the collector and brings back its answer.
///
/// The default is ``URLSessionTransport``. A transport throws only when no HTTP answer arrived (no network,
/// refused, timed out, cancelled); every answer, whatever its status, is returned. It must honour task cancellation
/// by giving up promptly.
public protocol ReporterTransport: Sendable {
    /// Sends `request`; returns the answer or throws when there was none.
    func send(_ request: UploadRequest) async throws -> UploadResponse
}

/// One HTTP request a reporter makes: `POST <endpoint>/v1/diagnostics` with its headers and body.
public struct UploadRequest: Sendable {
    /// The full URL.
    public var url: URL
    /// The HTTP method, `POST`.
    public var method: String
    /// Header fields in the order they are sent. The `Authorization` value holds the ingest key: never log it.
    public var headers: [(name: String, value: String)]
    /// The body as sent (gzip compressed when `Content-Encoding: gzip` is among the headers).
    public var body: [UInt8]

    /// Creates a request.
    public init(url: URL, method: String = "POST", headers: [(name: String, value: String)], body: [UInt8]) {
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
    }

    /// The value of the header `name` (compared case-insensitively), if present.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}

/// The collector's answer to one upload.
public struct UploadResponse: Sendable {
    /// The HTTP status code.
    public var status: Int
    /// Header fields, names lowercased.
    public var headers: [String: String]
    /// The body.
    public var body: [UInt8]

    /// Creates an answer; header names are lowercased.
    public init(status: Int, headers: [String: String] = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = Dictionary(
            headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
        self.body = body
    }
}
