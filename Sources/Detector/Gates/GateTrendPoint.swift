public import FlowmeterModels

/// The share of an app's installs below a gate's version over one stretch of time (a week of `trend`).
public struct GateTrendPoint: Hashable, Sendable, JSONRepresentable {
    /// The stretch's start, inclusive.
    public var from: Timestamp
    /// The stretch's end, exclusive.
    public var to: Timestamp
    /// Installs on versions below the gate over all installs that sent a batch then, in `0...1`, four places.
    public var belowShare: Double

    /// Creates a point.
    public init(from: Timestamp, to: Timestamp, belowShare: Double) {
        self.from = from
        self.to = to
        self.belowShare = belowShare
    }

    /// `{"from", "to", "belowShare"}`.
    public var jsonValue: JSONValue {
        .object([
            ("from", .string(from.rfc3339String)), ("to", .string(to.rfc3339String)),
            ("belowShare", .number(belowShare)),
        ])
    }
}
