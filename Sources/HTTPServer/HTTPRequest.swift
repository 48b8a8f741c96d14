/// One HTTP request, fully received, as a handler sees it.
///
/// The server has already applied the body limit and the receive deadline; the body is the decoded payload
/// (chunked transfer coding removed), never longer than `HTTPServerConfiguration.maxBodyBytes`.
public struct HTTPRequest: Sendable {
    /// The request method.
    public var method: HTTPMethod
    /// The percent-decoded path without the query, such as `/v1/diagnostics`.
    public var path: String
    /// The percent-decoded query items in order; an item without `=` has a nil value.
    public var queryItems: [(name: String, value: String?)]
    /// The request header fields.
    public var headers: HTTPHeaders
    /// The request body bytes.
    public var body: [UInt8]
    /// The client's address as `ip:port` (IPv6 as `[ip]:port`), or an empty string when unknown.
    public var remoteAddress: String
    /// The client the admission check named when it admitted the request (``HTTPAdmission/admit(client:)``), or nil
    /// (no check, none named, or a request a test built): lets a handler use what the check already worked out.
    public var admittedClient: String?

    /// Makes a request; the server builds these, tests of handlers may build their own.
    public init(
        method: HTTPMethod,
        path: String,
        queryItems: [(name: String, value: String?)] = [],
        headers: HTTPHeaders = HTTPHeaders(),
        body: [UInt8] = [],
        remoteAddress: String = "",
        admittedClient: String? = nil
    ) {
        self.method = method
        self.path = path
        self.queryItems = queryItems
        self.headers = headers
        self.body = body
        self.remoteAddress = remoteAddress
        self.admittedClient = admittedClient
    }

    /// The value of the first query item with that exact name, or nil when absent or valueless.
    public func queryValue(_ name: String) -> String? {
        for item in queryItems where item.name == name {
            return item.value
        }
        return nil
    }
}
