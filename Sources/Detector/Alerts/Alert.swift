public import FlowmeterModels
public import Rollups

/// An alert to send: firing or resolved, with Alertmanager's labels and annotations.
public struct Alert: Hashable, Sendable {
    /// Whether the alert is firing or resolved.
    public enum Status: String, Hashable, Sendable {
        /// Still open.
        case firing
        /// Closed; `endsAt` says when.
        case resolved
    }

    /// The stable identity, the key of `flowmeter.alerts.v1`.
    public var fingerprint: String
    /// Firing or resolved.
    public var status: Status
    /// Which finder produced it.
    public var kind: AlertState.Kind
    /// Alertmanager labels.
    public var labels: [String: String]
    /// `summary` and `description`.
    public var annotations: [String: String]
    /// When the detector opened it.
    public var startsAt: Timestamp
    /// When it resolved; nil while firing.
    public var endsAt: Timestamp?
    /// The finding's docs/api.md#query-output object, as last seen.
    public var payload: JSONValue

    /// Creates an alert.
    public init(
        fingerprint: String, status: Status, kind: AlertState.Kind, labels: [String: String],
        annotations: [String: String], startsAt: Timestamp, endsAt: Timestamp?, payload: JSONValue
    ) {
        self.fingerprint = fingerprint
        self.status = status
        self.kind = kind
        self.labels = labels
        self.annotations = annotations
        self.startsAt = startsAt
        self.endsAt = endsAt
        self.payload = payload
    }

    /// The message for `flowmeter.alerts.v1`: key the fingerprint, value this alert as JSON.
    public var message: AlertMessage { AlertMessage(alert: self) }
}
