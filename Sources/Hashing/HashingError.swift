public import FlowmeterModels

/// The one error `Hashing` throws, with the file and line where it was made.
public struct HashingError: FlowmeterError {
    /// What kind of failure this is; an open set, so switch with a `default`.
    public struct Code: FlowmeterErrorCode {
        /// The code's name.
        public let rawValue: String
        /// Wraps a code name.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// OpenSSL's random generator could not produce bytes (not seeded, or failing); retrying may help.
        public static let randomUnavailable = Code(rawValue: "randomUnavailable")
        /// A salt or key given as text is not valid (odd length, non-hex digits, or empty).
        public static let invalidSalt = Code(rawValue: "invalidSalt")
    }

    /// What kind of failure this is.
    public let code: Code
    /// A short explanation, safe to log: it never contains key or salt material.
    public let message: String
    /// The source file that made the error.
    public let file: String
    /// The source line that made the error.
    public let line: UInt

    /// Whether trying again may succeed: only for the random generator.
    public var isRetriable: Bool { code == .randomUnavailable }

    /// Makes an error, recording where it was made.
    public init(_ code: Code, _ message: String, file: String = #fileID, line: UInt = #line) {
        self.code = code
        self.message = message
        self.file = file
        self.line = line
    }

}
