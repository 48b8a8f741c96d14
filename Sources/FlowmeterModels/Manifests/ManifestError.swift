/// Why a manifest was refused: what is wrong, and where.
///
/// `POST /v1/manifests` answers `invalid` with 400 `{"error": "invalid_json", "message", "path"}` and `tooLarge`
/// with 413 `{"error": "too_large", …}`; `flowmeter manifests upload` prints the message with the path.
public struct ManifestError: FlowmeterError, Hashable {
    /// The kind of failure.
    public struct Code: FlowmeterErrorCode {
        /// The code's name.
        public let rawValue: String
        /// Wraps a code name.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// Not JSON, not an object, a required field missing, a wrong type, a name that is not an identifier, a bad
        /// key path, a key both required and optional.
        public static let invalid = Code(rawValue: "invalid")
        /// Over one of ``ManifestLimits``.
        public static let tooLarge = Code(rawValue: "tooLarge")
    }

    /// The kind of failure.
    public var code: Code
    /// What is wrong, in a sentence that names the field and the limit.
    public var message: String
    /// Where: the field as a dotted path (`types.image_text_card.required.Index 2`), `""` for the whole document.
    public var path: String

    /// The source file where the error was made.
    public let file: String
    /// The source line where the error was made.
    public let line: UInt

    /// Creates an error; `file` and `line` default to the caller's position.
    public init(_ code: Code, _ message: String, path: String = "", file: String = #fileID, line: UInt = #line) {
        self.code = code
        self.message = message
        self.path = path
        self.file = file
        self.line = line
    }

    /// Always `false`: the same manifest fails the same way.
    public var isRetriable: Bool { false }

    /// The message, with the path when there is one (what the CLI and the HTTP answer show, without the source
    /// position).
    public var description: String { path.isEmpty ? message : "\(message) (at \(path))" }
}
