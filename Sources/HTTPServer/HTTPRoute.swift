/// One route a component adds to a server it does not build: a method, an exact path and the handler.
///
/// `flowmeter serve` hands its read API and console routes to the collector's router this way, so the collector
/// need not know the query layer that answers them.
public struct HTTPRoute: Sendable {
    /// The method the route answers.
    public var method: HTTPMethod
    /// The exact path, such as `/v1/query/spikes`.
    public var path: String
    /// The handler; it runs on a server worker thread and may answer later, from any thread.
    public var handler: HTTPHandler

    /// Makes a route.
    public init(_ method: HTTPMethod, _ path: String, handler: @escaping HTTPHandler) {
        self.method = method
        self.path = path
        self.handler = handler
    }
}
