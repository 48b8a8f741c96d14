public import FlowmeterModels

/// One cause seen as spikes: the spikes of one (appID, kind, widgetType) that overlap in time, across versions and
/// in single versions, as an element of docs/api.md#query-output's `incidents`.
///
/// A backend deploy that breaks a type shows as a spike of the series across versions and one of every version it
/// reaches; listing each as its own finding says "five spikes" where there is one problem. The incident's headline
/// figures are those of its across-versions spike (the one with the most events, when the group holds several), or,
/// when only single versions crossed the thresholds, those of the version spike with the most events. Its onset is
/// the earliest onset of any of its spikes, and its suspect deploy that spike's.
public struct Incident: Hashable, Sendable, JSONRepresentable {
    /// The app.
    public var appID: String
    /// The diagnostic kind.
    public var kind: DiagnosticKind
    /// The widget type, `""` for events that carry none.
    public var widgetType: String
    /// The earliest onset of its spikes.
    public var onset: Timestamp
    /// The peak bucket of the headline spike.
    public var peakWindowStart: Timestamp
    /// The latest end of its spikes (exclusive); not part of the contract JSON.
    public var end: Timestamp
    /// Events in the headline spike's peak bucket.
    public var count: Int64
    /// Events the headline spike's baseline expected then.
    public var baseline: Double
    /// The headline spike's ratio.
    public var ratio: Double
    /// The versions it hit, each with its own figures, ordered by app version.
    public var versions: [IncidentVersion]
    /// The deploy the earliest spike is attributed to.
    public var suspectDeploy: SuspectDeploy?
    /// The releases its events carry: the across-versions spike's order first, then any the versions add.
    public var backendReleases: [String]
    /// The page ids its sampled events name, by name; not part of the contract JSON (owner rules match them).
    public var pages: [String]
    /// The spikes it groups, in report order (across versions first at each onset); not part of the contract JSON.
    public var spikes: [Spike]

    /// Creates an incident from the spikes of one (appID, kind, widgetType); `spikes` must not be empty.
    public init(spikes: [Spike]) {
        precondition(!spikes.isEmpty, "an incident groups at least one spike")
        let ordered = spikes.sorted(by: Self.reportOrder)
        let across = ordered.filter { $0.appVersion == nil }
        let headline = Self.largest(across.isEmpty ? ordered : across)
        let earliest = ordered[0]
        appID = earliest.appID
        kind = earliest.kind
        widgetType = earliest.widgetType
        onset = earliest.onset
        end = ordered.map(\.end).max()!
        peakWindowStart = headline.peakWindowStart
        count = headline.count
        baseline = headline.baseline
        ratio = headline.ratio
        suspectDeploy = earliest.suspectDeploy
        var releases: [String] = []
        for spike in across + ordered.filter({ $0.appVersion != nil }).sorted(by: { $0.count > $1.count }) {
            for release in spike.backendReleases where !releases.contains(release) { releases.append(release) }
        }
        backendReleases = releases
        pages = Array(Set(ordered.flatMap(\.pages))).sorted()
        var perVersion: [String: [Spike]] = [:]
        for spike in ordered { if let version = spike.appVersion { perVersion[version, default: []].append(spike) } }
        versions = perVersion.map { version, spikes in
            let peak = Self.largest(spikes)
            return IncidentVersion(
                appVersion: version, onset: spikes.map(\.onset).min()!, peakWindowStart: peak.peakWindowStart,
                count: peak.count, baseline: peak.baseline, ratio: peak.ratio)
        }
        .sorted { VersionOrder.less($0.appVersion, $1.appVersion) }
        self.spikes = ordered
    }

    /// Groups `spikes` into incidents: per (appID, kind, widgetType), spikes whose onset lies at most `gapSeconds`
    /// after the end of the incident so far join it (the same tolerance that merges flagged buckets into one spike).
    /// Ordered by onset, then app, kind and type.
    public static func grouping(_ spikes: [Spike], gapSeconds: Int64) -> [Incident] {
        struct Key: Hashable {
            var appID: String
            var kind: DiagnosticKind
            var widgetType: String
        }
        var incidents: [Incident] = []
        let groups = Dictionary(grouping: spikes) {
            Key(appID: $0.appID, kind: $0.kind, widgetType: $0.widgetType)
        }
        for (_, group) in groups {
            var current: [Spike] = []
            var currentEnd: Int64 = .min
            for spike in group.sorted(by: reportOrder) {
                if !current.isEmpty && spike.onset.secondsSinceEpoch > currentEnd + gapSeconds {
                    incidents.append(Incident(spikes: current))
                    current = []
                }
                currentEnd =
                    current.isEmpty ? spike.end.secondsSinceEpoch : max(currentEnd, spike.end.secondsSinceEpoch)
                current.append(spike)
            }
            if !current.isEmpty { incidents.append(Incident(spikes: current)) }
        }
        return incidents.sorted {
            if $0.onset != $1.onset { return $0.onset < $1.onset }
            if $0.appID != $1.appID { return $0.appID < $1.appID }
            if $0.kind.rawValue != $1.kind.rawValue { return $0.kind.rawValue < $1.kind.rawValue }
            return $0.widgetType < $1.widgetType
        }
    }

    /// Whether the incident is still going on at `now`: its last flagged bucket is at most `gapBuckets` complete
    /// buckets before the bucket `now` lies in, so a later flagged bucket could still join it. An alert for it
    /// resolves once this is false.
    public func isOngoing(at now: Timestamp, bucketSeconds: Int64, gapBuckets: Int) -> Bool {
        let current = SpikeDetector.floor(now.secondsSinceEpoch, to: bucketSeconds)
        return end.secondsSinceEpoch >= current - Int64(gapBuckets) * bucketSeconds
    }

    /// The contract's object, keys in its order; `suspectDeploy` is `null` when absent.
    public var jsonValue: JSONValue {
        .object([
            ("appID", .string(appID)),
            ("kind", .string(kind.rawValue)),
            ("widgetType", .string(widgetType)),
            ("onset", .string(onset.rfc3339String)),
            ("peakWindowStart", .string(peakWindowStart.rfc3339String)),
            ("count", .integer(count)),
            ("baseline", .number(baseline)),
            ("ratio", .number(ratio)),
            ("versions", .array(versions.map(\.jsonValue))),
            ("suspectDeploy", suspectDeploy?.jsonValue ?? .null),
            ("backendReleases", .array(backendReleases.map { .string($0) })),
        ])
    }

    /// The spike with the most events at its peak (ties: the earlier peak).
    private static func largest(_ spikes: [Spike]) -> Spike {
        spikes.max {
            $0.count != $1.count ? $0.count < $1.count : $0.peakWindowStart > $1.peakWindowStart
        }!
    }

    /// By onset, across versions before single versions, then by version.
    static func reportOrder(_ a: Spike, _ b: Spike) -> Bool {
        if a.onset != b.onset { return a.onset < b.onset }
        switch (a.appVersion, b.appVersion) {
        case (nil, nil): return false
        case (nil, _): return true
        case (_, nil): return false
        case (let left?, let right?): return VersionOrder.less(left, right)
        }
    }
}
