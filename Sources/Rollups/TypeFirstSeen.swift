public import FlowmeterModels

/// When a widget type was first seen with some kind in an app, over all stored history.
public struct TypeFirstSeen: Hashable, Sendable {
    /// The app.
    public var appID: String
    /// The widget type (`""` for events without one).
    public var widgetType: String
    /// The diagnostic kind the query asked for.
    public var kind: DiagnosticKind
    /// The earliest `firstSeen` of any of the app's series of this type and kind.
    public var firstSeen: Timestamp

    /// Creates a record.
    public init(appID: String, widgetType: String, kind: DiagnosticKind, firstSeen: Timestamp) {
        self.appID = appID
        self.widgetType = widgetType
        self.kind = kind
        self.firstSeen = firstSeen
    }
}
