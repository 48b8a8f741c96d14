public import FlowmeterModels

/// An error from the Rollups module: a bad wire message, an invalid deploy marker, a corrupt sketch.
///
/// None of these is retriable: the same bytes fail the same way, so a consumer should skip (and count) the message.
public struct RollupsError: FlowmeterError {
    /// What went wrong, as an extensible code.
    public let code: Code
    /// What went wrong, in words (for deploy markers, the message the HTTP answer carries).
    public let message: String
    /// The source file that made the error.
    public let file: String
    /// The source line that made the error.
    public let line: UInt

    /// Makes an error; `file` and `line` default to the caller's position.
    public init(_ code: Code, _ message: String, file: String = #fileID, line: UInt = #line) {
        self.code = code
        self.message = message
        self.file = file
        self.line = line
    }

    /// Always `false`: rollup errors come from the bytes, and the same bytes fail again.
    public var isRetriable: Bool { false }

    /// An extensible error code.
    public struct Code: FlowmeterErrorCode {
        /// The code's name.
        public let rawValue: String
        /// Wraps a code name.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// Serialized HyperLogLog bytes that are truncated, of an unknown version, or out of range.
        public static let invalidSketch = Code(rawValue: "invalidSketch")
        /// A deploy marker that is not valid JSON, misses a required key, or has a bad value.
        public static let invalidDeployMarker = Code(rawValue: "invalidDeployMarker")
        /// A `flowmeter.manifests.v1` message that is not a valid capability manifest.
        public static let invalidManifest = Code(rawValue: "invalidManifest")
    }
}
