public import FlowmeterModels

/// What `flowmeter manifests check --format json` prints: `{"from", "to", "manifests", "drift": [...]}`.
public struct ManifestDriftReport: Hashable, Sendable, JSONRepresentable {
    /// The window's start, inclusive.
    public var from: Timestamp
    /// The window's end, exclusive.
    public var to: Timestamp
    /// How many manifests were checked.
    public var manifestCount: Int
    /// The contradictions, by app, version (numerically), platform, type, then key.
    public var drift: [ManifestDrift]

    /// Creates a report.
    public init(from: Timestamp, to: Timestamp, manifestCount: Int, drift: [ManifestDrift]) {
        self.from = from
        self.to = to
        self.manifestCount = manifestCount
        self.drift = drift
    }

    /// The CLI's exit status: 0 when every manifest agrees with the traffic, 3 when one is out of date.
    public var exitStatus: Int32 { drift.isEmpty ? 0 : 3 }

    /// The object.
    public var jsonValue: JSONValue {
        .object([
            ("from", .string(from.rfc3339String)), ("to", .string(to.rfc3339String)),
            ("manifests", .integer(Int64(manifestCount))), ("drift", .array(drift.map(\.jsonValue))),
        ])
    }
}
