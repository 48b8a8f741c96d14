public import FlowmeterModels

/// An error from the Kafka client: a librdkafka error code, whether retrying is safe, and where it was made.
///
/// `isRetriable` is the one thing most callers act on: when it is `true` the same message may be produced again (the
/// collector answers 503 or re-enqueues); when `persistence` is `.possiblyPersisted` a retry may duplicate the message,
/// which downstream deduplication by event id absorbs.
public struct KafkaError: FlowmeterError {
    /// The librdkafka error code, named for the codes Flowmeter acts on.
    public let code: Code
    /// Whether producing or calling again can succeed; `false` for permanent errors such as an oversized message.
    public let isRetriable: Bool
    /// For a delivery failure, whether the broker may have written the message anyway; `nil` for other errors.
    public let persistence: KafkaPersistenceStatus?
    /// librdkafka's reason, or Flowmeter's, in words.
    public let message: String
    /// The source file that made the error.
    public let file: String
    /// The source line that made the error.
    public let line: UInt

    /// Makes an error; `file` and `line` default to the caller's position.
    public init(
        _ code: Code,
        _ message: String,
        isRetriable: Bool? = nil,
        persistence: KafkaPersistenceStatus? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) {
        self.code = code
        self.isRetriable = isRetriable ?? !code.isPermanent
        self.persistence = persistence
        self.message = message
        self.file = file
        self.line = line
    }

    /// The code's name, the message, and where the error was made.
    public var description: String {
        "KafkaError(\(code), retriable: \(isRetriable)): \(message) [\(file):\(line)]"
    }
}
