/// Why a manifest was refused: what is wrong, and where.
///
/// `POST /v1/manifests` answers `invalid` with 400 `{"error": "invalid_json", "message", "path"}` and `tooLarge`
/// with 413 `{"error": "too_large", …}`; `flowmeter manifests upload` prints the message with the path.
public struct ManifestError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of failure.
    public enum Code: Hashable, Sendable {
        /// Not JSON, not an object, a required field missing, a wrong type, a name that is not an identifier, a bad
        /// key path, a key both required and optional.
        case invalid
        /// Over one of ``ManifestLimits``.
        case tooLarge
    }

    /// The kind of failure.
    public var code: Code
    /// What is wrong, in a sentence that names the field and the limit.
    public var message: String
    /// Where: the field as a dotted path (`types.image_text_card.required.Index 2`), `""` for the whole document.
    public var path: String

    /// Creates an error.
    public init(_ code: Code, _ message: String, path: String = "") {
        self.code = code
        self.message = message
        self.path = path
    }

    /// The message, with the path when there is one.
    public var description: String { path.isEmpty ? message : "\(message) (at \(path))" }
}
