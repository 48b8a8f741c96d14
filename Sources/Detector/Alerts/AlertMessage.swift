/// One `flowmeter.alerts.v1` message: key the alert's fingerprint, value the alert as JSON (docs/api.md#kafka-topics).
///
/// The value is `{"fingerprint", "status": "firing"|"resolved", "kind": "spike"|"ungatedType"|"newType",
/// "labels": {...}, "annotations": {"summary", "description"}, "startsAt", "endsAt": null|time, "finding": {...}}`,
/// where `finding` is the spike or ungated-type object of docs/api.md#query-output. Whoever produces it sets the
/// topic's headers (`KafkaHeader.json(schema:)` in the Kafka target).
public struct AlertMessage: Hashable, Sendable {
    /// The topic's default name.
    public static let topic = "flowmeter.alerts.v1"

    /// The Kafka key: the fingerprint's UTF-8 bytes, so one alert's messages stay in order on one partition.
    public var key: [UInt8]
    /// The JSON value.
    public var value: [UInt8]

    /// Encodes `alert`.
    public init(alert: Alert) {
        key = Array(alert.fingerprint.utf8)
        let json = JSONValue.object([
            ("fingerprint", .string(alert.fingerprint)),
            ("status", .string(alert.status.rawValue)),
            ("kind", .string(alert.kind.rawValue)),
            ("labels", .object(alert.labels.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })),
            (
                "annotations",
                .object(alert.annotations.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })
            ),
            ("startsAt", .string(alert.startsAt.rfc3339String)),
            ("endsAt", alert.endsAt.map { .string($0.rfc3339String) } ?? .null),
            ("finding", alert.payload),
        ])
        value = Array(json.serialized().utf8)
    }

    /// Compares key and value.
    public static func == (lhs: AlertMessage, rhs: AlertMessage) -> Bool {
        lhs.key == rhs.key && lhs.value == rhs.value
    }

    /// Hashes key and value.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(key)
        hasher.combine(value)
    }
}
