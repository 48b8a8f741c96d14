public import FlowmeterModels

/// An error from the rollup sink: a consumer that cannot be made, or a store that keeps failing.
public struct SinkError: FlowmeterError {
    /// What went wrong, as an extensible code.
    public let code: Code
    /// What went wrong, in words.
    public let message: String
    /// Whether trying again later may succeed (a store or broker away), as opposed to a bad configuration.
    public let isRetriable: Bool
    /// The source file that made the error.
    public let file: String
    /// The source line that made the error.
    public let line: UInt

    /// Makes an error; `file` and `line` default to the caller's position.
    public init(
        _ code: Code, _ message: String, isRetriable: Bool = false, file: String = #fileID, line: UInt = #line
    ) {
        self.code = code
        self.message = message
        self.isRetriable = isRetriable
        self.file = file
        self.line = line
    }

    /// An extensible error code.
    public struct Code: FlowmeterErrorCode {
        /// The code's name.
        public let rawValue: String
        /// Wraps a code name.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The Kafka consumer could not be made or subscribed (bad configuration, unknown topic).
        public static let consumerFailed = Code(rawValue: "consumerFailed")
        /// Polling or committing failed permanently.
        public static let kafkaFailed = Code(rawValue: "kafkaFailed")
        /// The dead-letter file could not be opened or written.
        public static let deadLetterFailed = Code(rawValue: "deadLetterFailed")
        /// A record of the batches topic is not a batch record.
        public static let badRecord = Code(rawValue: "badRecord")
    }
}
