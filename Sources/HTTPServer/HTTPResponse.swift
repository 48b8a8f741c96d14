import FlowmeterModels
import FlowmeterWire

/// An HTTP response: status, header fields and body bytes.
///
/// The server adds `Cache-Control: no-store` and `X-Content-Type-Options: nosniff` to every response unless the
/// response sets them itself, and computes `Content-Length`; do not set `Content-Length` or `Connection` here.
public struct HTTPResponse: Sendable {
    /// The status code.
    public var status: HTTPStatus
    /// The header fields to send.
    public var headers: HTTPHeaders
    /// The body bytes.
    public var body: [UInt8]

    /// Makes a response.
    public init(status: HTTPStatus, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A response with a JSON body the caller has already encoded; sets `Content-Type: application/json`.
    public static func json(status: HTTPStatus, _ body: [UInt8], headers: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
        var allHeaders = headers
        allHeaders.replaceOrAdd(name: "Content-Type", value: "application/json")
        return HTTPResponse(status: status, headers: allHeaders, body: body)
    }

    /// A response with a JSON body given as a string; sets `Content-Type: application/json`.
    public static func json(status: HTTPStatus, _ body: String, headers: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
        json(status: status, Array(body.utf8), headers: headers)
    }

    /// A JSON error response, `{"error": code, "message": message}` (and `"path": path` when given); every string
    /// is escaped for JSON. The one renderer of every endpoint's error bodies.
    ///
    /// Put only what a client may see in `message`: no internal names, paths or stack details.
    public static func error(
        status: HTTPStatus,
        code: String,
        message: String,
        path: String? = nil,
        headers: HTTPHeaders = HTTPHeaders()
    ) -> HTTPResponse {
        var body: [UInt8] = []
        body.reserveCapacity(48 + code.utf8.count + message.utf8.count + (path?.utf8.count ?? 0))
        body.append(contentsOf: #"{"error":"#.utf8)
        JSONString.append(code, to: &body)
        body.append(contentsOf: #","message":"#.utf8)
        JSONString.append(message, to: &body)
        if let path {
            body.append(contentsOf: #","path":"#.utf8)
            JSONString.append(path, to: &body)
        }
        body.append(UInt8(ascii: "}"))
        return json(status: status, body, headers: headers)
    }

    /// The answer the server gives a suspended request whose handler did not answer in time: 503 `unavailable`
    /// with `Retry-After: 1`.
    public static let defaultTimeout = HTTPResponse.error(
        status: .serviceUnavailable,
        code: "unavailable",
        message: "The request could not be completed in time; retry later.",
        headers: ["Retry-After": "1"]
    )
}
