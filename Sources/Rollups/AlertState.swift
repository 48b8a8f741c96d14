public import FlowmeterModels

/// An alert the detector opened, and whether and when it resolved; stored so a restarted detector neither re-opens
/// nor forgets it.
public struct AlertState: Hashable, Sendable, Codable {
    /// What kind of finding an alert is about.
    public enum Kind: String, Hashable, Sendable, Codable {
        /// A series' events spiked above its baseline.
        case spike
        /// Release builds report a type the backend sends without a gate.
        case ungatedType
        /// A type never seen before in release builds of an app.
        case newType
    }

    /// The alert's identity (stable across detector runs), the key of `flowmeter.alerts.v1`.
    public var fingerprint: String
    /// What the alert is about.
    public var kind: Kind
    /// Alertmanager-style labels (`appID`, `widgetType`, ...).
    public var labels: [String: String]
    /// When it opened.
    public var openedAt: Timestamp
    /// When it resolved; nil while it is open.
    public var resolvedAt: Timestamp?
    /// The latest measured value (count, ratio) that kept it open.
    public var lastValue: Double
    /// The finding as JSON text (the spike or ungated-type object of docs/api.md#cli).
    public var payload: String

    /// Creates an alert state.
    public init(
        fingerprint: String, kind: Kind, labels: [String: String], openedAt: Timestamp, resolvedAt: Timestamp? = nil,
        lastValue: Double, payload: String
    ) {
        self.fingerprint = fingerprint
        self.kind = kind
        self.labels = labels
        self.openedAt = openedAt
        self.resolvedAt = resolvedAt
        self.lastValue = lastValue
        self.payload = payload
    }

    /// Whether the alert is still open.
    public var isOpen: Bool { resolvedAt == nil }
}
