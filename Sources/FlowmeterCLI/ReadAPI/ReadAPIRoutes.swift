import Collector
import HTTPServer

/// `GET /v1/query/{top,spikes,ungated,gates,versions,types,deploys,manifests,report}` (docs/api.md#reading): a read key (or
/// an admin key) as `Authorization: Bearer`, the CLI's options as query parameters, the CLI's JSON as the answer.
///
/// 401 `unauthorized` without a key that may read; 403 `forbidden` for an `app` the key may not read; 400
/// `invalid_parameter` with the parameter at fault as `path`; 503 `unavailable` when the store cannot be read or
/// too many queries run at once.
enum ReadAPIRoutes {
    /// The routes, answered by `service`.
    static func routes(_ service: ReadService) -> [HTTPRoute] {
        ReadQueries.commands.keys.sorted().map { query in
            HTTPRoute(.get, "/v1/query/\(query)") { request, responder in
                handle(query, request, responder, service: service)
            }
        }
    }

    private static func handle(
        _ query: String, _ request: HTTPRequest, _ responder: HTTPResponder, service: ReadService
    ) {
        let token = IngestKeys.bearerToken(fromAuthorization: request.headers["Authorization"])
        let access = service.keys.readAccess(token: token)
        guard access.isAuthenticated else {
            responder.respond(
                .error(
                    status: .unauthorized, code: "unauthorized",
                    message: "Send a read key as 'Authorization: Bearer <key>'.",
                    headers: ["WWW-Authenticate": "Bearer"]))
            return
        }
        let parameters = request.queryItems
        service.respond(responder) {
            response(await service.queries.answer(query, parameters: parameters, access: access))
        }
    }

    /// The HTTP answer for a query's outcome.
    static func response(_ answer: ReadQueries.Answer) -> HTTPResponse {
        switch answer {
        case .ok(let body, let contentType):
            HTTPResponse(status: .ok, headers: ["Content-Type": contentType], body: Array(body.utf8))
        case .badRequest(let parameter, let message):
            .error(status: .badRequest, code: "invalid_parameter", message: message, path: parameter)
        case .forbidden(let message):
            .error(status: .forbidden, code: "forbidden", message: message)
        case .failed(let message):
            .error(status: .serviceUnavailable, code: "unavailable", message: message, headers: ["Retry-After": "5"])
        }
    }
}
