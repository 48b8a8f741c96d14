public import FlowmeterModels

/// One app version an incident hit, with its own figures, as an element of an incident's `versions`.
public struct IncidentVersion: Hashable, Sendable, JSONRepresentable {
    /// The app version.
    public var appVersion: String
    /// The start of the version's first flagged bucket in the incident.
    public var onset: Timestamp
    /// The start of the version's bucket with the most events.
    public var peakWindowStart: Timestamp
    /// The version's events in that bucket.
    public var count: Int64
    /// Events the version's baseline expected in that bucket.
    public var baseline: Double
    /// `count` over the baseline floored at one event.
    public var ratio: Double

    /// Creates an entry.
    public init(
        appVersion: String, onset: Timestamp, peakWindowStart: Timestamp, count: Int64, baseline: Double,
        ratio: Double
    ) {
        self.appVersion = appVersion
        self.onset = onset
        self.peakWindowStart = peakWindowStart
        self.count = count
        self.baseline = baseline
        self.ratio = ratio
    }

    /// `{"appVersion", "onset", "peakWindowStart", "count", "baseline", "ratio"}`.
    public var jsonValue: JSONValue {
        .object([
            ("appVersion", .string(appVersion)),
            ("onset", .string(onset.rfc3339String)),
            ("peakWindowStart", .string(peakWindowStart.rfc3339String)),
            ("count", .integer(count)),
            ("baseline", .number(baseline)),
            ("ratio", .number(ratio)),
        ])
    }
}
