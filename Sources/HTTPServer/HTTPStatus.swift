/// An HTTP response status code.
///
/// The reason phrase is chosen by libmicrohttpd from the code; only the code travels.
public struct HTTPStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The numeric status code, 100 through 599.
    public let rawValue: Int

    /// Makes a status from its code; the server sends any code in 100...599 as given.
    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// The code, as an alternative spelling of `init(rawValue:)`.
    public init(_ code: Int) {
        self.rawValue = code
    }

    /// 200 OK.
    public static let ok = HTTPStatus(200)
    /// 201 Created.
    public static let created = HTTPStatus(201)
    /// 202 Accepted.
    public static let accepted = HTTPStatus(202)
    /// 204 No Content.
    public static let noContent = HTTPStatus(204)
    /// 207 Multi-Status.
    public static let multiStatus = HTTPStatus(207)
    /// 400 Bad Request.
    public static let badRequest = HTTPStatus(400)
    /// 401 Unauthorized.
    public static let unauthorized = HTTPStatus(401)
    /// 403 Forbidden.
    public static let forbidden = HTTPStatus(403)
    /// 404 Not Found.
    public static let notFound = HTTPStatus(404)
    /// 405 Method Not Allowed; send it with an `Allow` header.
    public static let methodNotAllowed = HTTPStatus(405)
    /// 411 Length Required.
    public static let lengthRequired = HTTPStatus(411)
    /// 413 Content Too Large.
    public static let contentTooLarge = HTTPStatus(413)
    /// 415 Unsupported Media Type.
    public static let unsupportedMediaType = HTTPStatus(415)
    /// 429 Too Many Requests; send it with `Retry-After`.
    public static let tooManyRequests = HTTPStatus(429)
    /// 500 Internal Server Error.
    public static let internalServerError = HTTPStatus(500)
    /// 503 Service Unavailable; send it with `Retry-After`.
    public static let serviceUnavailable = HTTPStatus(503)

    /// The numeric code.
    public var description: String { String(rawValue) }
}
