public import FlowmeterModels

/// What `flowmeter spikes --format json` prints: `{"from", "to", "spikes": [...], "incidents": [...]}`
/// (docs/api.md#query-output).
public struct SpikesReport: Hashable, Sendable, JSONRepresentable {
    /// The window's start, inclusive.
    public var from: Timestamp
    /// The window's end, exclusive.
    public var to: Timestamp
    /// The spikes, by onset, then app, kind, type, and version (across-versions first).
    public var spikes: [Spike]
    /// The spikes grouped by cause: one per (app, kind, type) and stretch of time, by onset.
    public var incidents: [Incident]

    /// Creates a report, grouping `spikes` into incidents with ``Incident/grouping(_:gapSeconds:)`` (by default the
    /// detector's one five-minute bucket of tolerance).
    public init(from: Timestamp, to: Timestamp, spikes: [Spike], incidentGapSeconds: Int64 = 300) {
        self.from = from
        self.to = to
        self.spikes = spikes
        self.incidents = Incident.grouping(spikes, gapSeconds: incidentGapSeconds)
    }

    /// The CLI's exit status for this report: 0 when nothing is flagged, 3 when something is.
    public var exitStatus: Int32 { spikes.isEmpty ? 0 : 3 }

    /// The same report limited to the incidents `isIncluded` keeps, with their spikes.
    public func filter(_ isIncluded: (Incident) -> Bool) -> SpikesReport {
        var copy = self
        copy.incidents = incidents.filter(isIncluded)
        let kept = Set(copy.incidents.flatMap(\.spikes))
        copy.spikes = spikes.filter { kept.contains($0) }
        return copy
    }

    /// The contract's object.
    public var jsonValue: JSONValue {
        .object([
            ("from", .string(from.rfc3339String)),
            ("to", .string(to.rfc3339String)),
            ("spikes", .array(spikes.map(\.jsonValue))),
            ("incidents", .array(incidents.map(\.jsonValue))),
        ])
    }
}
