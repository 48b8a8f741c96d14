/// A report of one event that was dropped while decoding a batch: the `diagnostics` element of a 202 answer.
public struct DecodeDiagnostic: Hashable, Sendable, Codable, CustomStringConvertible {
    /// Always `.malformedPayload` for an event that could not be decoded.
    public var kind: DiagnosticKind
    /// Where the event sits, for example `events.Index 3`.
    public var path: String
    /// What was wrong, for example `Missing key 'kind'`.
    public var message: String

    /// Creates a report.
    public init(kind: DiagnosticKind = .malformedPayload, path: String, message: String) {
        self.kind = kind
        self.path = path
        self.message = message
    }

    /// `message at path`, for logs.
    public var description: String { path.isEmpty ? message : "\(message) at \(path)" }
}
