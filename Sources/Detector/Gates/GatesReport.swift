public import FlowmeterModels

/// What `flowmeter gates --format json` prints: `{"from", "to", "gates": [...]}`.
public struct GatesReport: Hashable, Sendable, JSONRepresentable {
    /// The window's start, inclusive.
    public var from: Timestamp
    /// The window's end, exclusive ("today" is its last day).
    public var to: Timestamp
    /// The gates, soonest forecast first (gates without a date last), then by app and type.
    public var gates: [DroppableGate]

    /// Creates a report.
    public init(from: Timestamp, to: Timestamp, gates: [DroppableGate]) {
        self.from = from
        self.to = to
        self.gates = gates
    }

    /// The contract-style object.
    public var jsonValue: JSONValue {
        .object([
            ("from", .string(from.rfc3339String)),
            ("to", .string(to.rfc3339String)),
            ("gates", .array(gates.map(\.jsonValue))),
        ])
    }
}
