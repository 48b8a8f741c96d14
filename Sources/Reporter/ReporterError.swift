/// Why a batch was not taken; `isRetriable` tells whether sending the same batch again later may succeed.
public struct ReporterError: Error, Sendable, CustomStringConvertible {
    /// The HTTP status, or nil when no answer arrived (connection refused, timed out).
    public var status: Int?
    /// The collector's `error` code (`invalid_json`, `unauthorized`, `rate_limited`, …) or a transport description.
    public var code: String
    /// The collector's message, when it sent one.
    public var message: String
    /// Seconds the collector asked to wait (`Retry-After`), when it did.
    public var retryAfterSeconds: Double?
    /// Where the error was made.
    public var file: String
    /// The line where the error was made.
    public var line: Int

    /// Creates an error.
    public init(
        status: Int?, code: String, message: String, retryAfterSeconds: Double? = nil, file: String = #fileID,
        line: Int = #line
    ) {
        self.status = status
        self.code = code
        self.message = message
        self.retryAfterSeconds = retryAfterSeconds
        self.file = file
        self.line = line
    }

    /// CONTRACT §1: a client that got anything but 202, 400, 401, 413 or 415 retries the same batch later.
    public var isRetriable: Bool {
        guard let status else { return true }
        return ![400, 401, 413, 415].contains(status) && !(200..<300).contains(status)
    }

    public var description: String {
        let prefix = status.map { "HTTP \($0) " } ?? ""
        return "\(prefix)\(code): \(message)"
    }
}
