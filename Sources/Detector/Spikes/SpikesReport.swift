public import FlowmeterModels

/// What `flowmeter spikes --format json` prints: `{"from", "to", "spikes": [...]}` (CONTRACT §5).
public struct SpikesReport: Hashable, Sendable, JSONRepresentable {
    /// The window's start, inclusive.
    public var from: Timestamp
    /// The window's end, exclusive.
    public var to: Timestamp
    /// The spikes, by onset, then app, kind, type, and version (across-versions first).
    public var spikes: [Spike]

    /// Creates a report.
    public init(from: Timestamp, to: Timestamp, spikes: [Spike]) {
        self.from = from
        self.to = to
        self.spikes = spikes
    }

    /// The CLI's exit status for this report: 0 when nothing is flagged, 3 when something is.
    public var exitStatus: Int32 { spikes.isEmpty ? 0 : 3 }

    /// The contract's object.
    public var jsonValue: JSONValue {
        .object([
            ("from", .string(from.rfc3339String)),
            ("to", .string(to.rfc3339String)),
            ("spikes", .array(spikes.map(\.jsonValue))),
        ])
    }
}
