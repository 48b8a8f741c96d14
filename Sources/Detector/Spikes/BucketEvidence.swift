import FlowmeterModels
import Rollups

/// What the bucket counts alone do not say, read from the minute rollups only for the few buckets that need it:
/// how many installs a series' bucket reached, how many installs its app (or version) has, and which backend
/// releases the bucket's events carry and whether the app ever sent one of them before.
///
/// One per report; it caches what it reads, so a candidate bucket costs two store queries and an app's release
/// history is read once per report.
final class BucketEvidence {
    /// A series' events in one bucket, from its minute rollups.
    struct SeriesBucketDetail {
        var installs: Int
        var events: Int64
        var releases: [String: Int64]
    }

    private let reader: any RollupReader
    private let bucketSeconds: Int64
    /// Where the release history starts: the first bucket any baseline reads.
    private let historyStart: Int64
    private let end: Int64
    private var details: [SeriesIdentity: [Int64: SeriesBucketDetail]] = [:]
    private var trafficInstalls: [TrafficIdentity: [Int64: Int]] = [:]
    private var releaseFirstSeen: [String: [String: Int64]] = [:]

    init(reader: any RollupReader, bucketSeconds: Int64, historyStart: Int64, end: Int64) {
        self.reader = reader
        self.bucketSeconds = bucketSeconds
        self.historyStart = historyStart
        self.end = end
    }

    /// Installs, events and releases of `series` in the bucket at `start`.
    func detail(_ series: SeriesIdentity, at start: Int64) throws -> SeriesBucketDetail {
        if let cached = details[series]?[start] { return cached }
        let rollups = try reader.seriesRollups(
            SeriesQuery(
                from: Timestamp(secondsSinceEpoch: start), to: Timestamp(secondsSinceEpoch: start + bucketSeconds),
                appID: series.appID, kinds: [series.kind], widgetTypes: [series.widgetType],
                buildConfiguration: .release, appVersion: series.appVersion))
        var installs = HyperLogLog()
        var detail = SeriesBucketDetail(installs: 0, events: 0, releases: [:])
        for rollup in rollups {
            installs.merge(rollup.installs)
            detail.events += rollup.events
            detail.releases.merge(rollup.releases, uniquingKeysWith: +)
        }
        detail.installs = Int(installs.estimate.rounded())
        details[series, default: [:]][start] = detail
        return detail
    }

    /// Distinct installs of the app (or version) in release builds that sent batches in the hour up to the end of
    /// the bucket at `start`: who was using it then, the denominator of a series' install share (at night, a few).
    func installs(of traffic: TrafficIdentity, at start: Int64) throws -> Int {
        let end = start + bucketSeconds
        if let cached = trafficInstalls[traffic]?[end] { return cached }
        var sketch = HyperLogLog()
        for rollup in try reader.versionRollups(
            from: Timestamp(secondsSinceEpoch: end - 3600), to: Timestamp(secondsSinceEpoch: end),
            appID: traffic.appID)
        where rollup.key.buildConfiguration == .release
            && (traffic.appVersion == nil || rollup.key.appVersion == traffic.appVersion)
        {
            sketch.merge(rollup.installs)
        }
        let count = Int(sketch.estimate.rounded())
        trafficInstalls[traffic, default: [:]][end] = count
        return count
    }

    /// Whether any release event of `appID` carried `release` before `start`, as far back as the report reads.
    func appSent(_ release: String, appID: String, before start: Int64) throws -> Bool {
        if releaseFirstSeen[appID] == nil {
            var firstSeen: [String: Int64] = [:]
            for rollup in try reader.seriesRollups(
                SeriesQuery(
                    from: Timestamp(secondsSinceEpoch: historyStart), to: Timestamp(secondsSinceEpoch: end),
                    appID: appID, buildConfiguration: .release))
            {
                for seen in rollup.releases.keys where firstSeen[seen] == nil {
                    // Rollups come ordered by window, so the first is the earliest.
                    firstSeen[seen] = rollup.window.start
                }
            }
            releaseFirstSeen[appID] = firstSeen
        }
        guard let first = releaseFirstSeen[appID]?[release] else { return false }
        return first < start
    }
}
