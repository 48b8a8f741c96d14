public import FlowmeterModels

/// A widget type that release builds of an app reported for the first time in the window.
public struct NewType: Hashable, Sendable, JSONRepresentable {
    /// The app.
    public var appID: String
    /// The widget type.
    public var widgetType: String
    /// The kind of its earliest event (ties: the kind named first by ``NewTypeFinder/kinds``).
    public var kind: DiagnosticKind
    /// Its earliest event in any release build, over all stored history.
    public var firstSeen: Timestamp

    /// Creates a finding.
    public init(appID: String, widgetType: String, kind: DiagnosticKind, firstSeen: Timestamp) {
        self.appID = appID
        self.widgetType = widgetType
        self.kind = kind
        self.firstSeen = firstSeen
    }

    /// `{"appID", "widgetType", "kind", "firstSeen"}`.
    public var jsonValue: JSONValue {
        .object([
            ("appID", .string(appID)),
            ("widgetType", .string(widgetType)),
            ("kind", .string(kind.rawValue)),
            ("firstSeen", .string(firstSeen.rfc3339String)),
        ])
    }
}
