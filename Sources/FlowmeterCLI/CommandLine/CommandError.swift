public import FlowmeterModels

/// A command that understood its arguments but could not do the work: the store is missing, a file is unreadable.
///
/// The runner prints `error: <message>` and the process exits 1 (a usage error is ``CommandUsageError`` and exits
/// 2).
public struct CommandError: FlowmeterError {
    /// What went wrong, extensible without breaking callers that switch on known codes.
    public struct Code: FlowmeterErrorCode {
        /// The code's name.
        public let rawValue: String
        /// Wraps a code name.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The rollup store named by `--store` does not exist.
        public static let storeMissing = Code(rawValue: "storeMissing")
        /// An input file could not be read or parsed.
        public static let unreadableInput = Code(rawValue: "unreadableInput")
        /// A server (a collector) could not be reached or did not answer.
        public static let unavailable = Code(rawValue: "unavailable")
        /// A server (a collector) answered, and refused what was sent.
        public static let refused = Code(rawValue: "refused")
    }

    /// What went wrong.
    public let code: Code
    /// One or two sentences for the user: what failed and what to do about it.
    public let message: String
    /// The source file where the error was made.
    public let file: String
    /// The source line where the error was made.
    public let line: UInt

    /// Makes an error; `file` and `line` default to the caller's position.
    public init(_ code: Code, _ message: String, file: String = #fileID, line: UInt = #line) {
        self.code = code
        self.message = message
        self.file = file
        self.line = line
    }

    /// Command failures are not retried by Flowmeter itself.
    public var isRetriable: Bool { false }

    /// The message, as the runner prints it.
    public var description: String { message }
}
