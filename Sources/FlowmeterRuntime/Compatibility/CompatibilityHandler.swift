import Collector
import HTTPServer

/// `GET /v1/compatibility` (docs/api.md#reading): what one app build can render, answered from a ``CompatibilityCache``.
///
/// Runs on the HTTP worker thread and never touches the store: a key check in constant time, a dictionary read, and
/// the rendered body. 401 without a read or admin key, 400 without `appID`, `platform` or `appVersion`, 403 for an
/// app the key may not read, 503 before the first refresh, 404 `unknown_build` when nothing is known about the build,
/// 304 when `If-None-Match` names the answer's entity tag, else 200 with `ETag` and `Cache-Control: max-age=300`.
struct CompatibilityHandler: Sendable {
    /// The path it answers.
    static let path = "/v1/compatibility"

    let keys: IngestKeys
    let cache: CompatibilityCache

    /// The route for the collector's server.
    var route: HTTPRoute {
        HTTPRoute(.get, Self.path) { request, responder in responder.respond(handle(request)) }
    }

    func handle(_ request: HTTPRequest) -> HTTPResponse {
        let access = keys.readAccess(token: IngestKeys.bearerToken(fromAuthorization: request.headers["Authorization"]))
        guard access.isAuthenticated else {
            return .error(
                status: .unauthorized, code: "unauthorized",
                message: "Send a read key as 'Authorization: Bearer <key>'.", headers: ["WWW-Authenticate": "Bearer"])
        }
        var named: [String] = []
        for name in ["appID", "platform", "appVersion"] {
            let value = request.queryValue(name) ?? ""
            if value.isEmpty {
                return .error(
                    status: .badRequest, code: "invalid_request", message: "The query needs '\(name)'.", path: name)
            }
            named.append(value)
        }
        let version = CompatibilityIndex.VersionID(appID: named[0], platform: named[1], appVersion: named[2])
        guard access.mayRead(version.appID) else {
            return .error(status: .forbidden, code: "forbidden", message: "This key may not read that app.")
        }
        guard let index = cache.index else {
            return .error(
                status: .serviceUnavailable, code: "unavailable",
                message: "The compatibility answers are still loading; retry shortly.", headers: ["Retry-After": "1"])
        }
        let build = request.queryValue("build").flatMap { $0.isEmpty ? nil : $0 }
        guard let answer = index.answer(for: version, build: build) else {
            return .error(
                status: .notFound, code: "unknown_build",
                message: "Nothing is known about that build: no manifest, capabilities or traffic.")
        }
        let headers: HTTPHeaders = ["ETag": answer.etag, "Cache-Control": "max-age=300", "Vary": "Authorization"]
        if let tags = request.headers["If-None-Match"], Self.matches(tags, answer.etag) {
            return HTTPResponse(status: HTTPStatus(304), headers: headers)
        }
        return .json(status: .ok, answer.body, headers: headers)
    }

    /// Whether an `If-None-Match` value (a list of tags, or `*`) names `etag`; weak tags compare weakly (RFC 9110).
    static func matches(_ header: String, _ etag: String) -> Bool {
        for part in header.split(separator: ",") {
            var tag = part.trimmingPrefixAndSuffixSpaces()
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag = String(tag.dropFirst(2)) }
            if tag == etag { return true }
        }
        return false
    }
}

extension Substring {
    fileprivate func trimmingPrefixAndSuffixSpaces() -> String {
        String(self.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
