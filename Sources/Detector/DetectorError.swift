public import FlowmeterModels

/// An error from the Detector module: an alert receiver that refused or could not be reached, or an owners file
/// that cannot be used.
///
/// Reading rollups throws the store's own errors unchanged; only what the detector does itself throws this.
public struct DetectorError: FlowmeterError {
    /// What went wrong, as an extensible code.
    public let code: Code
    /// What went wrong, in words.
    public let message: String
    /// The HTTP status the receiver answered, when it answered.
    public let httpStatus: Int?
    /// The source file that made the error.
    public let file: String
    /// The source line that made the error.
    public let line: UInt

    /// Makes an error; `file` and `line` default to the caller's position.
    public init(
        _ code: Code, _ message: String, httpStatus: Int? = nil, file: String = #fileID, line: UInt = #line
    ) {
        self.code = code
        self.message = message
        self.httpStatus = httpStatus
        self.file = file
        self.line = line
    }

    /// Whether sending again later may succeed: transport failures, timeouts, 429 and 5xx answers.
    public var isRetriable: Bool {
        switch code {
        case .transport: return true
        case .rejected: return httpStatus.map { $0 == 429 || $0 >= 500 } ?? false
        default: return false
        }
    }

    /// The code, the message, and where the error was made.
    public var description: String {
        "DetectorError(\(code)\(httpStatus.map { ", HTTP \($0)" } ?? "")): \(message) [\(file):\(line)]"
    }

    /// An extensible error code.
    public struct Code: FlowmeterErrorCode {
        /// The code's name.
        public let rawValue: String
        /// Wraps a code name.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The receiver could not be reached or did not answer in time.
        public static let transport = Code(rawValue: "transport")
        /// The receiver answered with a status other than 2xx.
        public static let rejected = Code(rawValue: "rejected")
        /// A receiver URL that cannot be used.
        public static let invalidURL = Code(rawValue: "invalidURL")
        /// An owners file that cannot be read or parsed.
        public static let invalidOwners = Code(rawValue: "invalidOwners")
    }
}
