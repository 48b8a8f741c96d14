public import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The default transport: an ephemeral `URLSession` (no cookies, no cache, no credential storage).
///
/// On Apple platforms the session does not use a constrained network (Low Data Mode) unless `allowsLowDataMode` is
/// set; a request refused for that reason is an upload without an answer, kept and retried later.
public struct URLSessionTransport: ReporterTransport {
    /// Owns the session, and invalidates it when the last copy of the transport goes away (a session is never
    /// released otherwise).
    private final class Owner: Sendable {
        let session: URLSession

        init(_ session: URLSession) {
            self.session = session
        }

        deinit { session.finishTasksAndInvalidate() }
    }

    private let owner: Owner

    /// Creates a transport whose requests give up after `timeout` seconds. A reporter sends one upload at a time;
    /// raise `maximumConnectionsPerHost` only when several reporters share the transport.
    public init(timeout: TimeInterval = 30, allowsLowDataMode: Bool = false, maximumConnectionsPerHost: Int = 2) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.timeoutIntervalForResource = timeout
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        configuration.urlCredentialStorage = nil
        configuration.httpMaximumConnectionsPerHost = max(1, maximumConnectionsPerHost)
        #if canImport(Darwin)
            configuration.waitsForConnectivity = false
            configuration.allowsConstrainedNetworkAccess = allowsLowDataMode
        #endif
        owner = Owner(URLSession(configuration: configuration))
    }

    /// Sends `request` and returns whatever the server answered; throws when no answer arrived.
    public func send(_ request: UploadRequest) async throws -> UploadResponse {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method
        for header in request.headers {
            urlRequest.setValue(header.value, forHTTPHeaderField: header.name)
        }
        urlRequest.httpBody = Data(request.body)
        let (data, response) = try await owner.session.data(for: urlRequest)
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
        }
        return UploadResponse(status: http.statusCode, headers: headers, body: Array(data))
    }
}
