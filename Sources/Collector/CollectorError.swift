public import FlowmeterModels

/// Why a collector could not be built or started, or its disk spool could not take a batch.
public struct CollectorError: FlowmeterError {
    /// What went wrong; an extensible set.
    public struct Code: FlowmeterErrorCode {
        /// The code's name.
        public let rawValue: String
        /// Wraps a code name.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// A setting is out of range.
        public static let invalidConfiguration = Code(rawValue: "invalidConfiguration")
        /// The embedded cluster or the producer could not be made.
        public static let kafkaUnavailable = Code(rawValue: "kafkaUnavailable")
        /// The HTTP server could not listen.
        public static let listenFailed = Code(rawValue: "listenFailed")
        /// No random salt could be made.
        public static let randomnessUnavailable = Code(rawValue: "randomnessUnavailable")
        /// The disk spool could not be opened: its directory cannot be made or read, or another collector holds it.
        public static let spoolUnavailable = Code(rawValue: "spoolUnavailable")
        /// The disk spool has no room for the batch under `--spool-max-bytes`.
        public static let spoolFull = Code(rawValue: "spoolFull")
        /// Writing the disk spool failed (a full disk, a read-only file system, an I/O error).
        public static let spoolWriteFailed = Code(rawValue: "spoolWriteFailed")
    }

    /// What went wrong.
    public let code: Code
    /// A sentence for the operator; never a key or a salt.
    public let message: String
    /// Where the error was made.
    public let file: String
    /// Where the error was made.
    public let line: UInt

    init(_ code: Code, _ message: String, file: String = #fileID, line: UInt = #line) {
        self.code = code
        self.message = message
        self.file = file
        self.line = line
    }

    /// Whether trying again may help: for Kafka, listening and the spool's disk, which depend on the outside.
    public var isRetriable: Bool {
        [.kafkaUnavailable, .listenFailed, .spoolFull, .spoolWriteFailed].contains(code)
    }

    /// `<code>: <message>`.
    public var description: String { "\(code): \(message)" }
}
