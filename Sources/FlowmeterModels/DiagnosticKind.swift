/// The kind of a decode diagnostic: an open set of identifiers.
///
/// The four named kinds are what Flow-UI reports today; any other identifier (a newer client's kind such as
/// `unknownArrangement`) is kept exactly as it came. A blank string or one with a control character is not a kind
/// (``IdentifierRule``).
public struct DiagnosticKind: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    /// The wire spelling, always an identifier under ``IdentifierRule``.
    public let rawValue: String

    /// Creates a kind from its wire spelling; returns nil for a value that is not an identifier (``IdentifierRule``:
    /// empty or blank, or holding a control character).
    public init?(rawValue: String) {
        guard IdentifierRule.isValid(rawValue) else { return nil }
        self.rawValue = rawValue
    }

    @usableFromInline
    package init(unchecked rawValue: String) {
        self.rawValue = rawValue
    }

    /// A widget `type` the app does not know.
    public static let unknownType = DiagnosticKind(unchecked: "unknownType")
    /// A known widget whose payload failed to decode.
    public static let malformedPayload = DiagnosticKind(unchecked: "malformedPayload")
    /// An array element the app dropped, for example one without a type.
    public static let droppedElement = DiagnosticKind(unchecked: "droppedElement")
    /// A duplicate widget `id` the app renamed.
    public static let duplicateID = DiagnosticKind(unchecked: "duplicateID")

    /// Whether this is one of the four kinds this version names.
    public var isNamed: Bool {
        self == .unknownType || self == .malformedPayload || self == .droppedElement || self == .duplicateID
    }

    /// A readable rendering for logs.
    public var description: String { rawValue }

    /// Decodes an identifier; anything else is a `dataCorrupted` error.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let raw = try container.decode(String.self)
        guard let kind = DiagnosticKind(rawValue: raw) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "Invalid value for kind")
        }
        self = kind
    }

    /// Encodes the wire spelling.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
