public import FlowmeterModels

/// An error from the HTTP server: a code to switch on, a message for people, and where it was made.
public struct HTTPServerError: FlowmeterError {
    /// What went wrong, extensible without breaking callers.
    public struct Code: FlowmeterErrorCode {
        /// The code's name.
        public let rawValue: String
        /// Wraps a code name.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The address and port are already bound by another socket.
        public static let addressInUse = Code(rawValue: "addressInUse")
        /// The host is not an IPv4 or IPv6 literal.
        public static let invalidAddress = Code(rawValue: "invalidAddress")
        /// Creating, binding or listening on the socket failed for another reason.
        public static let socketFailed = Code(rawValue: "socketFailed")
        /// libmicrohttpd refused to start with these options.
        public static let daemonStartFailed = Code(rawValue: "daemonStartFailed")
        /// `start()` was called on a server that is running or has stopped.
        public static let invalidState = Code(rawValue: "invalidState")
    }

    /// What went wrong.
    public let code: Code
    /// A human-readable explanation, including the `errno` text when there is one.
    public let message: String
    /// Whether trying again later may succeed (a busy port may free up; bad options will not).
    public var isRetriable: Bool { code == .addressInUse }
    /// The source file that made the error.
    public let file: String
    /// The source line that made the error.
    public let line: UInt

    /// Makes an error, recording the caller's file and line.
    public init(_ code: Code, _ message: String, file: String = #fileID, line: UInt = #line) {
        self.code = code
        self.message = message
        self.file = file
        self.line = line
    }

}
