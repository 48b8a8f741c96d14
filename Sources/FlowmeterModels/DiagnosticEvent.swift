/// One decode diagnostic as an app reports it.
public struct DiagnosticEvent: Hashable, Sendable, Codable {
    /// The event's own id, when the app sends one; downstream an event without one is `<batch id>/<index>`.
    public var id: String?
    /// What went wrong; required.
    public var kind: DiagnosticKind
    /// The widget `type` involved, when there is one.
    public var widgetType: String?
    /// Where in the page the decoder was, Flow-UI style (`page.sections.Index 0.widgets.Index 1`).
    public var codingPath: String?
    /// The app's human-readable description.
    public var message: String?
    /// The page being decoded.
    public var pageID: String?
    /// The surface (page, sheet, ...) being decoded.
    public var surface: String?
    /// The backend release that served the page, as `service@version`.
    public var backendRelease: String?
    /// How many times the app saw this same event; at least 1.
    public var count: Int
    /// When the app saw it first; required.
    public var occurredAt: Timestamp

    /// Creates an event.
    public init(
        id: String? = nil, kind: DiagnosticKind, widgetType: String? = nil, codingPath: String? = nil,
        message: String? = nil, pageID: String? = nil, surface: String? = nil, backendRelease: String? = nil,
        count: Int = 1, occurredAt: Timestamp
    ) {
        self.id = id
        self.kind = kind
        self.widgetType = widgetType
        self.codingPath = codingPath
        self.message = message
        self.pageID = pageID
        self.surface = surface
        self.backendRelease = backendRelease
        self.count = count
        self.occurredAt = occurredAt
    }
}

extension DiagnosticEvent {
    enum CodingKeys: String, CodingKey {
        case id, kind, widgetType, codingPath, message, pageID, surface, backendRelease, count, occurredAt
    }

    /// Decodes one event, applying the contract's limits; throws a `DecodingError` whose description is the
    /// contract's message (`Missing key 'kind'`, ...).
    ///
    /// Fields are checked in a fixed order (kind, occurredAt, id, widgetType, codingPath, message, pageID, surface,
    /// backendRelease, count), so the first problem reported does not depend on key order in the JSON.
    public init(from decoder: any Decoder) throws {
        guard let container = try? decoder.container(keyedBy: CodingKeys.self) else {
            throw DecodingError.typeMismatch(
                Any.self,
                .init(
                    codingPath: decoder.codingPath,
                    debugDescription: DecodeMessages.typeMismatch(
                        expected: "Object", key: nil, found: foundType(of: decoder))
                )
            )
        }
        self.kind = DiagnosticKind(unchecked: try container.requiredIdentifier(.kind))
        self.occurredAt = try container.timestamp(.occurredAt, required: true)!
        self.id = try container.identifier(.id)
        self.widgetType = try container.identifier(.widgetType, limit: FieldLimits.widgetType)
        self.codingPath = try container.string(.codingPath, limit: FieldLimits.codingPath)
        self.message = try container.string(.message, limit: FieldLimits.message)
        self.pageID = try container.identifier(.pageID)
        self.surface = try container.identifier(.surface)
        self.backendRelease = try container.identifier(.backendRelease)
        let count = try container.int(.count) ?? 1
        guard count >= 1 else { throw container.invalid(DecodeMessages.invalidCount(count, key: "count")) }
        self.count = count
    }
}
