/// The module's error: a batch that cannot be taken at all (HTTP 400).
///
/// A problem with one event never produces this error; the event is dropped and reported instead.
public struct BatchDecodingError: FlowmeterError, Hashable {
    /// What kind of problem; an extensible set of codes.
    public struct Code: FlowmeterErrorCode {
        /// The code's name.
        public let rawValue: String
        /// Wraps a code name.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The body is not valid JSON (syntax, UTF-8, escapes, numbers out of range, nesting deeper than 512).
        public static let invalidJSON = Code(rawValue: "invalidJSON")
        /// A required batch-level key is missing.
        public static let missingKey = Code(rawValue: "missingKey")
        /// A batch-level key holds the wrong JSON type.
        public static let typeMismatch = Code(rawValue: "typeMismatch")
        /// A batch-level key has the right type but an unusable value (for example an invalid `sentAt`).
        public static let invalidValue = Code(rawValue: "invalidValue")

        /// The `events` array holds more elements than the decoder was allowed to take (the fast decoder's
        /// `maxEvents`); decoding stopped there.
        public static let tooManyEvents = Code(rawValue: "tooManyEvents")
    }

    /// What kind of problem.
    public var code: Code
    /// The container holding the problem, for example `client`; empty for the top level.
    public var path: String
    /// What was wrong, for example `Missing key 'appID'`.
    public var message: String
    /// Where the error was made.
    public var file: String
    /// Where the error was made.
    public var line: UInt

    /// Creates an error, recording where it was made.
    public init(_ code: Code, _ message: String, path: String, file: String = #fileID, line: UInt = #line) {
        self.code = code
        self.path = path
        self.message = message
        self.file = file
        self.line = line
    }

    /// Never: the same bytes fail the same way on every try.
    public var isRetriable: Bool { false }

    /// A readable rendering for logs.
    public var description: String { path.isEmpty ? "\(code): \(message)" : "\(code): \(message) at \(path)" }

    /// Equal when code, path and message are; where the error was made does not count.
    public static func == (lhs: BatchDecodingError, rhs: BatchDecodingError) -> Bool {
        lhs.code == rhs.code && lhs.path == rhs.path && lhs.message == rhs.message
    }

    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(path)
        hasher.combine(message)
    }
}
