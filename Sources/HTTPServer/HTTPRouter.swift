/// Routes requests to handlers by exact method and path.
///
/// Paths match exactly and case-sensitively: `/metrics/` is not `/metrics`, and there are no prefixes or
/// parameters. An unknown path gets 404 `not_found`; a known path with another method gets 405
/// `method_not_allowed` with an `Allow` header. `HEAD` is not implied by `GET`. Build the router before starting
/// the server; it is an immutable value once handed over.
public struct HTTPRouter: Sendable {
    private struct Route: Sendable {
        var handlers: [(method: HTTPMethod, handler: HTTPHandler)] = []
        var allow = ""
    }

    private var routes: [String: Route] = [:]

    /// Makes an empty router.
    public init() {}

    /// Registers `handler` for `method` on `path`; registering the same pair again replaces the handler.
    public mutating func add(_ method: HTTPMethod, _ path: String, handler: @escaping HTTPHandler) {
        var route = routes[path] ?? Route()
        route.handlers.removeAll { $0.method == method }
        route.handlers.append((method: method, handler: handler))
        route.allow = route.handlers.map(\.method.rawValue).joined(separator: ", ")
        routes[path] = route
    }

    /// Whether a handler is registered for `method` on `path`.
    public func answers(_ method: HTTPMethod, _ path: String) -> Bool {
        routes[path]?.handlers.contains { $0.method == method } ?? false
    }

    /// Answers `request` with the matching handler, or with 404 or 405.
    public func handle(_ request: HTTPRequest, responder: HTTPResponder) {
        guard let route = routes[request.path] else {
            responder.respond(.error(status: .notFound, code: "not_found", message: "No such resource."))
            return
        }
        for entry in route.handlers where entry.method == request.method {
            responder.setRoute(request.path)
            entry.handler(request, responder)
            return
        }
        responder.respond(
            .error(
                status: .methodNotAllowed,
                code: "method_not_allowed",
                message: "This resource does not support that method.",
                headers: ["Allow": route.allow]
            )
        )
    }

    /// The router as a handler for `HTTPServer`.
    public var handler: HTTPHandler {
        { request, responder in handle(request, responder: responder) }
    }
}
