/// The app's optional capability header: what it can render.
public struct Capabilities: Hashable, Sendable, Codable {
    /// The newest page schema version the app understands.
    public var maxSchemaVersion: Int?
    /// The widget types the app has registered decoders for (each truncated to 256 scalars on decode).
    public var registeredTypes: [String]?

    /// Creates a capability header.
    public init(maxSchemaVersion: Int? = nil, registeredTypes: [String]? = nil) {
        self.maxSchemaVersion = maxSchemaVersion
        self.registeredTypes = registeredTypes
    }
}

extension Capabilities {
    enum CodingKeys: String, CodingKey {
        case maxSchemaVersion, registeredTypes
    }

    /// Decodes the header; any wrong type is an error (it fails the batch).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.maxSchemaVersion = try container.int(.maxSchemaVersion)
        guard var list = try container.array(.registeredTypes, required: false) else {
            self.registeredTypes = nil
            return
        }
        var types: [String] = []
        while !list.isAtEnd {
            let element = try list.superDecoder()
            guard let type = try? element.singleValueContainer().decode(String.self) else {
                throw DecodingError.typeMismatch(
                    Any.self,
                    .init(
                        codingPath: element.codingPath,
                        debugDescription: DecodeMessages.typeMismatch(
                            expected: "String", key: nil, found: foundType(of: element))
                    )
                )
            }
            let kept = FieldLimits.truncate(type, to: FieldLimits.other)
            if let violation = IdentifierRule.violation(in: kept) {
                throw DecodingError.dataCorrupted(
                    .init(codingPath: element.codingPath, debugDescription: violation.message(key: "registeredTypes")))
            }
            types.append(kept)
        }
        self.registeredTypes = types
    }
}
