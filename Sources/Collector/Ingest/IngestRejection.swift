import FlowmeterModels
import FlowmeterWire
import HTTPServer

/// Why the collector refused a request: the single place where its failures become status codes and JSON bodies,
/// for every route it answers (docs/api.md: ingest's table, deploy markers, capability manifests, `/readyz`).
///
/// The ingest handler, the admin routes (``AdminWrites``), the readiness check and the server's own 503s (deadline,
/// body budget) all answer from here. Messages are written for clients: they never name internal types, files,
/// Kafka errors or keys.
enum IngestRejection: Error, Sendable, Hashable {
    /// No bearer token, or one that is not an ingest key.
    case unauthorized
    /// A known key that may not write this app.
    case forbidden
    /// An admin route without an admin key, and not an ingest key either (401).
    case adminUnauthorized
    /// An ingest key on an admin route (403).
    case notAdmin(AdminRoute)
    /// The key's token bucket is empty.
    case rateLimited(retryAfterSeconds: Int)
    /// `Content-Type` is not `application/json`.
    case unsupportedContentType
    /// `Content-Encoding` is not identity, gzip or deflate.
    case unsupportedEncoding
    /// A `Content-Encoding` other than identity on a route that takes plain bodies only (manifests).
    case encodingNotTaken
    /// The body inflated past the cap.
    case inflatedTooLarge(limit: Int)
    /// The compressed body is not a valid stream of its declared encoding.
    case corruptEncoding
    /// More events than the batch limit.
    case tooManyEvents(limit: Int)
    /// Not JSON, or a required batch-level key is missing or of the wrong type.
    case invalidJSON(message: String, path: String)
    /// A manifest over ``ManifestLimits``, with the path of the field that passed a limit.
    case manifestTooLarge(message: String, path: String)
    /// Kafka cannot take the batch now (the queue is full, delivery failed or the deadline passed), nor the spool.
    case unavailable(reason: UnavailableReason)
    /// `GET /readyz` while a 202 is not possible: a stable word for machines and a sentence for people.
    case notReady(reason: String, message: String)

    /// Why Kafka could not take a batch, for metrics.
    enum UnavailableReason: String, Sendable, Hashable {
        case queueFull = "queue_full"
        case deliveryFailed = "delivery_failed"
        case deadline = "deadline"
        case retryInFlight = "retry_in_flight"
        case shuttingDown = "shutting_down"
        case spoolFull = "spool_full"
        case spoolFailed = "spool_failed"
    }

    /// The `reason` label of `flowmeter_rejections_total`.
    var reason: String {
        switch self {
        case .unauthorized, .adminUnauthorized: "unauthorized"
        case .forbidden, .notAdmin: "forbidden"
        case .rateLimited: "rate_limited"
        case .unsupportedContentType: "unsupported_content_type"
        case .unsupportedEncoding, .encodingNotTaken: "unsupported_encoding"
        case .inflatedTooLarge: "inflated_too_large"
        case .corruptEncoding: "corrupt_encoding"
        case .tooManyEvents: "too_many_events"
        case .invalidJSON: "invalid_json"
        case .manifestTooLarge: "too_large"
        case .unavailable(let reason): "unavailable_" + reason.rawValue
        case .notReady: "not_ready"
        }
    }

    /// The answer a client gets.
    var response: HTTPResponse {
        switch self {
        case .unauthorized:
            .error(
                status: .unauthorized, code: "unauthorized",
                message: "Send a known ingest key as 'Authorization: Bearer <key>'.",
                headers: ["WWW-Authenticate": "Bearer"])
        case .forbidden:
            .error(status: .forbidden, code: "forbidden", message: "This key may not write this appID.")
        case .adminUnauthorized:
            .error(
                status: .unauthorized, code: "unauthorized",
                message: "Send an admin key as 'Authorization: Bearer <key>'.",
                headers: ["WWW-Authenticate": "Bearer"])
        case .notAdmin(let route):
            .error(status: .forbidden, code: "forbidden", message: "\(route.title) need an admin key.")
        case .rateLimited(let seconds):
            .error(
                status: .tooManyRequests, code: "rate_limited",
                message: "This key's rate limit is spent; retry after \(seconds) s.",
                headers: ["Retry-After": RetryAfter.rateLimited(seconds)])
        case .unsupportedContentType:
            .error(
                status: .unsupportedMediaType, code: "unsupported_media_type",
                message: "Content-Type must be application/json.")
        case .unsupportedEncoding:
            .error(
                status: .unsupportedMediaType, code: "unsupported_media_type",
                message: "Content-Encoding must be identity, gzip or deflate.")
        case .encodingNotTaken:
            .error(
                status: .unsupportedMediaType, code: "unsupported_media_type",
                message: "Manifests are sent uncompressed; Content-Encoding is not supported.")
        case .inflatedTooLarge(let limit):
            .error(
                status: .contentTooLarge, code: "too_large",
                message: "The body inflates to more than \(limit) bytes.")
        case .corruptEncoding:
            .error(
                status: .badRequest, code: "invalid_json",
                message: "The body is not valid data for its Content-Encoding.", path: "")
        case .tooManyEvents(let limit):
            .error(
                status: .contentTooLarge, code: "too_large",
                message: "A batch may carry at most \(limit) events; split it.")
        case .invalidJSON(let message, let path):
            .error(status: .badRequest, code: "invalid_json", message: message, path: path)
        case .manifestTooLarge(let message, let path):
            .error(status: .contentTooLarge, code: "too_large", message: message, path: path)
        case .unavailable:
            Self.unavailableResponse
        case .notReady(let reason, let message):
            .json(
                status: .serviceUnavailable, Self.notReadyBody(reason: reason, message: message),
                headers: ["Retry-After": "5"])
        }
    }

    /// `{"error":"unavailable","reason":…,"message":…}`.
    private static func notReadyBody(reason: String, message: String) -> [UInt8] {
        var body: [UInt8] = Array(#"{"error":"unavailable","reason":"#.utf8)
        JSONString.append(reason, to: &body)
        body.append(contentsOf: #","message":"#.utf8)
        JSONString.append(message, to: &body)
        body.append(UInt8(ascii: "}"))
        return body
    }

    /// 503 `unavailable` with a `Retry-After` drawn from ``RetryAfter/unavailableSeconds``; also the server's answer
    /// when nobody answers in time (the server draws its own `Retry-After` per answer then).
    static var unavailableResponse: HTTPResponse {
        .error(
            status: .serviceUnavailable, code: "unavailable",
            message: "The batch could not be stored now; retry it later.",
            headers: ["Retry-After": RetryAfter.unavailable()])
    }
}
