/// What became of one request, reported to `HTTPServerConfiguration.onRequestCompleted` for metrics.
public struct HTTPRequestCompletion: Sendable {
    /// How a request ended.
    public enum Outcome: Sendable, Hashable {
        /// A response was sent in full.
        case responded
        /// The server answered with `timeoutResponse` because the handler missed `responseDeadline`.
        case respondedAfterDeadline
        /// The body grew past `maxBodyBytes` while streaming; the connection was closed without a response.
        case bodyTooLarge
        /// The client did not deliver the request within `requestDeadline`; the connection was closed.
        case receiveDeadlineExceeded
        /// The client went away, or the connection failed, before the response was sent.
        case connectionFailed
        /// The server stopped before the response was sent.
        case serverStopped
    }

    /// The request method.
    public let method: HTTPMethod
    /// The request path; unbounded in cardinality, so prefer `route` for metric labels.
    public let path: String
    /// The route the router matched, or nil when none did (404, 405) or no router was used.
    public let route: String?
    /// The client the admission check named, or nil (no check, or none named).
    public var client: String? = nil
    /// The status sent, or nil when the connection closed without one.
    public let status: HTTPStatus?
    /// How the request ended.
    public let outcome: Outcome
    /// The time from the request's headers arriving to its end.
    public let duration: Duration
}
