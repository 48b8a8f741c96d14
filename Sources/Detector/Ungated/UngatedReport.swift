public import FlowmeterModels

/// What `flowmeter ungated --format json` prints: `{"from", "to", "ungated": [...]}` (docs/api.md#query-output).
public struct UngatedReport: Hashable, Sendable, JSONRepresentable {
    /// The window's start, inclusive.
    public var from: Timestamp
    /// The window's end, exclusive.
    public var to: Timestamp
    /// The ungated types, most events first (ties by app, then type).
    public var ungated: [UngatedType]

    /// Creates a report.
    public init(from: Timestamp, to: Timestamp, ungated: [UngatedType]) {
        self.from = from
        self.to = to
        self.ungated = ungated
    }

    /// The CLI's exit status for this report: 0 when nothing is flagged, 3 when something is.
    public var exitStatus: Int32 { ungated.isEmpty ? 0 : 3 }

    /// The contract's object.
    public var jsonValue: JSONValue {
        .object([
            ("from", .string(from.rfc3339String)),
            ("to", .string(to.rfc3339String)),
            ("ungated", .array(ungated.map(\.jsonValue))),
        ])
    }
}
