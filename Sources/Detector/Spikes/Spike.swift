public import FlowmeterModels

/// A series whose events rose sharply above its baseline, as an element of docs/api.md#query-output's `spikes`.
public struct Spike: Hashable, Sendable, JSONRepresentable {
    /// The app.
    public var appID: String
    /// The diagnostic kind.
    public var kind: DiagnosticKind
    /// The widget type, `""` for events that carry none.
    public var widgetType: String
    /// The app version, or nil when the spike is across versions.
    public var appVersion: String?
    /// The start of the first flagged bucket.
    public var onset: Timestamp
    /// The start of the bucket with the most events.
    public var peakWindowStart: Timestamp
    /// The end of the last flagged bucket (exclusive); not part of the contract JSON.
    public var end: Timestamp
    /// Events in the peak bucket.
    public var count: Int64
    /// Events the baseline expected in the peak bucket (traffic-normalized when the app sends `decodes`).
    public var baseline: Double
    /// `count` divided by the baseline, the baseline floored at one event so a silent series gives a finite ratio.
    public var ratio: Double
    /// Whether the baseline was a rate per decode scaled by the bucket's decodes; not part of the contract JSON.
    public var isNormalized: Bool
    /// The deploy the spike is attributed to, from its onset bucket's releases and `onset`.
    public var suspectDeploy: SuspectDeploy?
    /// The backend releases the spike's events carry, most frequent first (ties by name).
    public var backendReleases: [String]
    /// The page ids its sampled events name, by name; not part of the contract JSON (owner rules match them).
    public var pages: [String]
    /// What opened it; not part of the contract JSON.
    public var opening: Opening
    /// The start of the bucket that opened it: `onset`, or later when buckets held back as too small to open one
    /// (see ``SpikeDetector``) became its onset; a detector pass could first report it at this bucket's end. Not part
    /// of the contract JSON.
    public var openedAt: Timestamp

    /// What made a bucket open a spike (``SpikeDetector``).
    public enum Opening: String, Hashable, Sendable {
        /// Its count reached the absolute floor (`--min-events`).
        case eventCount
        /// It reached enough of the app's (or version's) installs.
        case installShare
        /// From nothing, every event carried one backend release the app never sent before.
        case newRelease
    }

    /// Creates a spike.
    public init(
        appID: String, kind: DiagnosticKind, widgetType: String, appVersion: String?, onset: Timestamp,
        peakWindowStart: Timestamp, end: Timestamp, count: Int64, baseline: Double, ratio: Double,
        isNormalized: Bool, opening: Opening = .eventCount, suspectDeploy: SuspectDeploy?, backendReleases: [String],
        pages: [String] = [], openedAt: Timestamp? = nil
    ) {
        self.appID = appID
        self.kind = kind
        self.widgetType = widgetType
        self.appVersion = appVersion
        self.onset = onset
        self.peakWindowStart = peakWindowStart
        self.end = end
        self.count = count
        self.baseline = baseline
        self.ratio = ratio
        self.isNormalized = isNormalized
        self.suspectDeploy = suspectDeploy
        self.backendReleases = backendReleases
        self.pages = pages
        self.opening = opening
        self.openedAt = openedAt ?? onset
    }

    /// The contract's object, keys in its order; `appVersion` and `suspectDeploy` are `null` when absent.
    public var jsonValue: JSONValue {
        .object([
            ("appID", .string(appID)),
            ("kind", .string(kind.rawValue)),
            ("widgetType", .string(widgetType)),
            ("appVersion", appVersion.map { .string($0) } ?? .null),
            ("onset", .string(onset.rfc3339String)),
            ("peakWindowStart", .string(peakWindowStart.rfc3339String)),
            ("count", .integer(count)),
            ("baseline", .number(baseline)),
            ("ratio", .number(ratio)),
            ("suspectDeploy", suspectDeploy?.jsonValue ?? .null),
            ("backendReleases", .array(backendReleases.map { .string($0) })),
        ])
    }
}
