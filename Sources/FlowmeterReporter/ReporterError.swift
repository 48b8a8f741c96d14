public import FlowmeterModels

/// The SDK's error: why a ``FlowmeterReporter`` could not start.
public struct ReporterError: FlowmeterError, Hashable {
    /// What kind of problem; an extensible set of codes.
    public struct Code: FlowmeterErrorCode {
        /// The code's name.
        public let rawValue: String
        /// Wraps a code name.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// Another reporter holds the queue directory, in this process or another one (an app extension sharing
        /// an App Group container): use one reporter per directory, or a directory per process.
        public static let directoryInUse = Code(rawValue: "directoryInUse")
        /// The queue directory's lock file cannot be opened or locked.
        public static let directoryUnavailable = Code(rawValue: "directoryUnavailable")
    }

    /// What kind of problem.
    public var code: Code
    /// What went wrong, in words a user may see.
    public var message: String
    /// Where the error was made.
    public var file: String
    /// Where the error was made.
    public var line: UInt

    /// Creates an error, recording where it was made.
    public init(_ code: Code, _ message: String, file: String = #fileID, line: UInt = #line) {
        self.code = code
        self.message = message
        self.file = file
        self.line = line
    }

    /// Whether the same call may succeed later: a directory in use is free once its reporter closes.
    public var isRetriable: Bool { code == .directoryInUse }
}
