/// What the server knows of a request before any body byte is read: the request line and the headers.
public struct HTTPRequestHead: Sendable {
    /// The request method.
    public var method: HTTPMethod
    /// The percent-decoded path without the query.
    public var path: String
    /// The request header fields.
    public var headers: HTTPHeaders
    /// The declared `Content-Length`, or nil when the request declared none (chunked, or no body).
    public var contentLength: UInt64?

    /// Makes a head; the server builds these, tests of admission checks may build their own.
    public init(method: HTTPMethod, path: String, headers: HTTPHeaders = HTTPHeaders(), contentLength: UInt64? = nil) {
        self.method = method
        self.path = path
        self.headers = headers
        self.contentLength = contentLength
    }
}

/// An admission check's decision on a request whose body has not been read yet.
public enum HTTPAdmission: Sendable {
    /// Read the body. `client` names who pays for it: its body bytes count against that client's share of the
    /// server's body budget, and the completion report carries it (for per-client metrics). nil shares the
    /// budget's anonymous share; use a bounded set of names (one per configured key), never client input.
    case admit(client: String?)
    /// Answer now with this response, before any body byte is read, and close the connection; `client` is
    /// reported with the completion as for `admit`.
    case reject(HTTPResponse, client: String? = nil)
}

/// Decides, from the request line and headers alone, whether a request's body is read at all.
///
/// Runs on a libmicrohttpd worker thread in the first access-handler call: never block in it. Cheap checks only
/// (a key lookup, a token bucket's peek).
public typealias HTTPAdmissionCheck = @Sendable (HTTPRequestHead) -> HTTPAdmission

extension HTTPServerConfiguration {
    /// `response` with the `Retry-After` of ``retryAfter`` when it is set and the response carries the header:
    /// the form in which the server sends the answers it makes itself.
    func serverAnswer(_ response: HTTPResponse) -> HTTPResponse {
        guard let retryAfter, response.headers["Retry-After"] != nil else { return response }
        var answer = response
        answer.headers.replaceOrAdd(name: "Retry-After", value: retryAfter())
        return answer
    }
}
