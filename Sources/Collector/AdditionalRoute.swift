package import HTTPServer

/// A route that a part built beside the collector (the compatibility API) adds to the collector's HTTP server.
///
/// The handler runs on the server's worker thread: it answers from memory and never waits on a store or the network.
package struct AdditionalRoute: Sendable {
    /// The method it answers.
    package var method: HTTPMethod
    /// The exact path it answers.
    package var path: String
    /// What answers the request.
    package var handler: HTTPHandler

    /// Makes a route for `method` on `path`.
    package init(_ method: HTTPMethod, _ path: String, handler: @escaping HTTPHandler) {
        self.method = method
        self.path = path
        self.handler = handler
    }
}
