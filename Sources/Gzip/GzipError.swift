public import FlowmeterModels

/// The one error `Gzip` throws: what went wrong with a compressed body, and where the error was made.
///
/// Match on `code`; `message` is for logs and may quote zlib's own text, never the body's bytes.
public struct GzipError: FlowmeterError {
    /// What kind of failure this is; an open set, so switch with a `default`.
    public struct Code: FlowmeterErrorCode {
        /// The code's name.
        public let rawValue: String
        /// Wraps a code name.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The inflated bytes would exceed the caller's cap; inflation stopped at the cap (HTTP 413).
        public static let tooLarge = Code(rawValue: "tooLarge")
        /// The stream is not valid: bad header, bad checksum or length, truncated, or trailing bytes (HTTP 400).
        public static let corrupt = Code(rawValue: "corrupt")
        /// zlib could not allocate its state; the only code worth retrying.
        public static let outOfMemory = Code(rawValue: "outOfMemory")
    }

    /// What kind of failure this is.
    public let code: Code
    /// A short human-readable explanation, safe to log.
    public let message: String
    /// The source file that made the error.
    public let file: String
    /// The source line that made the error.
    public let line: UInt

    /// Whether the same input may succeed later: only when memory ran out.
    public var isRetriable: Bool { code == .outOfMemory }

    /// Makes an error, recording where it was made.
    public init(_ code: Code, _ message: String, file: String = #fileID, line: UInt = #line) {
        self.code = code
        self.message = message
        self.file = file
        self.line = line
    }

}
