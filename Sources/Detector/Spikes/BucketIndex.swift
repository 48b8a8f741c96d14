import FlowmeterModels
import Rollups

/// A series as the spike detector judges it: platforms and (for the across-versions series) versions merged.
struct SeriesIdentity: Hashable {
    var appID: String
    var kind: DiagnosticKind
    var widgetType: String
    /// Nil for the series across versions.
    var appVersion: String?

    /// The traffic that is this series' denominator: the app's, or the version's.
    var traffic: TrafficIdentity { TrafficIdentity(appID: appID, appVersion: appVersion) }
}

/// An app's (or one app version's) traffic key.
struct TrafficIdentity: Hashable {
    var appID: String
    var appVersion: String?
}

/// Batches and decodes in one bucket.
struct Traffic {
    var batches: Int64 = 0
    var decodes: Int64 = 0
}

/// Release-build bucket counts and traffic, keyed for lookups by series and bucket start.
struct BucketIndex {
    private(set) var counts: [SeriesIdentity: [Int64: Int64]] = [:]
    private(set) var traffic: [TrafficIdentity: [Int64: Traffic]] = [:]
    /// Buckets in which the app (or version) reported any release event, of any series, by occurrence time.
    private(set) var activity: [TrafficIdentity: Set<Int64>] = [:]

    init(series: [SeriesBucket], traffic versionBuckets: [VersionBucket], perVersion: Bool) {
        for bucket in series where bucket.series.buildConfiguration == .release {
            let across = SeriesIdentity(
                appID: bucket.series.appID, kind: bucket.series.kind, widgetType: bucket.series.widgetType,
                appVersion: nil)
            counts[across, default: [:]][bucket.bucketStart, default: 0] += bucket.events
            activity[TrafficIdentity(appID: bucket.series.appID, appVersion: nil), default: []].insert(
                bucket.bucketStart)
            activity[
                TrafficIdentity(appID: bucket.series.appID, appVersion: bucket.series.appVersion), default: []
            ].insert(bucket.bucketStart)
            if perVersion {
                var version = across
                version.appVersion = bucket.series.appVersion
                counts[version, default: [:]][bucket.bucketStart, default: 0] += bucket.events
            }
        }
        for bucket in versionBuckets where bucket.key.buildConfiguration == .release {
            for key in [
                TrafficIdentity(appID: bucket.key.appID, appVersion: nil),
                TrafficIdentity(appID: bucket.key.appID, appVersion: bucket.key.appVersion),
            ] {
                traffic[key, default: [:]][bucket.bucketStart, default: Traffic()].batches += bucket.batches
                traffic[key, default: [:]][bucket.bucketStart, default: Traffic()].decodes += bucket.decodes
            }
        }
    }

    /// Whether `identity` was seen live in the bucket at `start`: it sent batches then (by receipt minute) or
    /// reported an event of any series then (by occurrence minute).
    func isObserved(_ identity: TrafficIdentity, at start: Int64) -> Bool {
        (traffic[identity]?[start]?.batches ?? 0) > 0 || activity[identity]?.contains(start) == true
    }
}
