/// What the adapter needs from one Flow-UI decode diagnostic: its kind, the widget type, where in the page, and a
/// message.
///
/// Flow-UI is not a dependency of this package, so the example declares the four fields it reads; in an app,
/// conform Flow-UI's own diagnostic type to it (`extension DecodeDiagnostics.Element: FlowUIDiagnostic {}`, adjusting
/// the four property names to your Flow-UI version).
protocol FlowUIDiagnostic {
    /// The kind's wire name: `unknownType`, `malformedPayload`, `droppedElement`, `duplicateID` or a newer one.
    var kindName: String { get }
    /// The widget type involved, when there is one.
    var widgetType: String? { get }
    /// Where in the page the decoder was.
    var codingPath: [any CodingKey] { get }
    /// Flow-UI's description.
    var message: String { get }
}
