public import FlowmeterModels

/// An error from the HTTP server: a code to switch on, a message for people, and where it was made.
public struct HTTPServerError: FlowmeterError {
    /// What went wrong, extensible without breaking callers.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// The address and port are already bound by another socket.
        public static let addressInUse = Code("addressInUse")
        /// The host is not an IPv4 or IPv6 literal.
        public static let invalidAddress = Code("invalidAddress")
        /// Creating, binding or listening on the socket failed for another reason.
        public static let socketFailed = Code("socketFailed")
        /// libmicrohttpd refused to start with these options.
        public static let daemonStartFailed = Code("daemonStartFailed")
        /// `start()` was called on a server that is running or has stopped.
        public static let invalidState = Code("invalidState")

        /// The code's name.
        public var description: String { name }
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
