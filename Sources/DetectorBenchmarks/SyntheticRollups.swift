public import FlowmeterModels
public import Rollups

/// A read-only rollup store over generated rollups, indexed by time so weeks of traffic read fast.
///
/// Answers every ``RollupReader`` query the way `InMemoryRollupStore` does (same filters, same order); alert state
/// is not kept (saving it does nothing), and there are no manifests or watermarks.
public final class SyntheticRollups: RollupReader {
    /// Series rollups, ordered by window, then series.
    public let series: [SeriesRollup]
    /// Version rollups, ordered by window, then key.
    public let versions: [VersionRollup]
    /// Deploy markers, ordered by `finishedAt`.
    public let deployMarkers: [DeployMarker]

    /// A store of these rollups; they are sorted here.
    public init(series: [SeriesRollup], versions: [VersionRollup], deploys: [DeployMarker]) {
        self.series = series.sorted { $0.window != $1.window ? $0.window < $1.window : $0.series < $1.series }
        self.versions = versions.sorted { $0.window != $1.window ? $0.window < $1.window : $0.key < $1.key }
        self.deployMarkers = deploys.sorted { $0.finishedAt < $1.finishedAt }
    }

    /// Series rollups in range and matching the filters, ordered by window, then series.
    public func seriesRollups(_ query: SeriesQuery) throws -> [SeriesRollup] {
        var found: [SeriesRollup] = []
        var index = Self.firstIndex(in: series, atOrAfter: query.from.secondsSinceEpoch) { $0.window.start }
        while index < series.count, series[index].window.start < query.to.secondsSinceEpoch {
            if query.matches(series[index].series, window: series[index].window) { found.append(series[index]) }
            index += 1
        }
        return found
    }

    /// Events per series per bucket, ordered by bucket start, then series.
    public func seriesBuckets(_ query: SeriesQuery, bucketSeconds: Int64) throws -> [SeriesBucket] {
        var sums: [BucketSlot<RollupSeries>: Int64] = [:]
        for rollup in try seriesRollups(query) {
            sums[
                BucketSlot(key: rollup.series, start: rollup.window.bucketStart(bucketSeconds: bucketSeconds)),
                default: 0] +=
                rollup.events
        }
        return sums.map { SeriesBucket(series: $0.key.key, bucketStart: $0.key.start, events: $0.value) }
            .sorted { $0.bucketStart != $1.bucketStart ? $0.bucketStart < $1.bucketStart : $0.series < $1.series }
    }

    /// Version rollups in range (and of `appID` when given), ordered by window, then key.
    public func versionRollups(from: Timestamp, to: Timestamp, appID: String?) throws -> [VersionRollup] {
        var found: [VersionRollup] = []
        var index = Self.firstIndex(in: versions, atOrAfter: from.secondsSinceEpoch) { $0.window.start }
        while index < versions.count, versions[index].window.start < to.secondsSinceEpoch {
            if appID == nil || versions[index].key.appID == appID { found.append(versions[index]) }
            index += 1
        }
        return found
    }

    /// Traffic per app build per bucket, ordered by bucket start, then key.
    public func versionBuckets(from: Timestamp, to: Timestamp, appID: String?, bucketSeconds: Int64) throws
        -> [VersionBucket]
    {
        var buckets: [BucketSlot<VersionKey>: VersionBucket] = [:]
        for rollup in try versionRollups(from: from, to: to, appID: appID) {
            let slot = BucketSlot(key: rollup.key, start: rollup.window.bucketStart(bucketSeconds: bucketSeconds))
            var bucket =
                buckets[slot]
                ?? VersionBucket(key: rollup.key, bucketStart: slot.start, batches: 0, cleanBatches: 0, decodes: 0)
            bucket.batches += rollup.batches
            bucket.cleanBatches += rollup.cleanBatches
            bucket.decodes += rollup.decodes
            buckets[slot] = bucket
        }
        return buckets.values.sorted {
            $0.bucketStart != $1.bucketStart ? $0.bucketStart < $1.bucketStart : $0.key < $1.key
        }
    }

    /// The earliest `firstSeen` per (appID, widgetType) of `kind` in `buildConfiguration` builds.
    public func firstSeen(appID: String?, kind: DiagnosticKind, buildConfiguration: BuildConfiguration) throws
        -> [TypeFirstSeen]
    {
        var earliest: [String: [String: Timestamp]] = [:]
        for rollup in series
        where rollup.series.kind == kind && rollup.series.buildConfiguration == buildConfiguration
            && (appID == nil || rollup.series.appID == appID)
        {
            let current = earliest[rollup.series.appID]?[rollup.series.widgetType]
            earliest[rollup.series.appID, default: [:]][rollup.series.widgetType] = min(
                current ?? rollup.firstSeen, rollup.firstSeen)
        }
        return earliest.sorted { $0.key < $1.key }.flatMap { app, types in
            types.sorted { $0.key < $1.key }.map {
                TypeFirstSeen(appID: app, widgetType: $0.key, kind: kind, firstSeen: $0.value)
            }
        }
    }

    /// Deploy markers that finished in `from..<to`, ordered by `finishedAt`.
    public func deploys(from: Timestamp, to: Timestamp) throws -> [DeployMarker] {
        deployMarkers.filter { from <= $0.finishedAt && $0.finishedAt < to }
    }

    /// Does nothing: the synthetic store keeps no alert state.
    public func saveAlertState(_ alerts: [AlertState]) throws {}

    /// None.
    public func openAlerts() throws -> [AlertState] { [] }

    /// None.
    public func manifests(appID: String?) throws -> [CapabilityManifest] { [] }

    /// Nothing recorded.
    public func freshness() throws -> StoreFreshness { StoreFreshness() }

    private struct BucketSlot<Key: Hashable>: Hashable {
        var key: Key
        var start: Int64
    }

    private static func firstIndex<Element>(
        in elements: [Element], atOrAfter start: Int64, _ time: (Element) -> Int64
    ) -> Int {
        var low = 0
        var high = elements.count
        while low < high {
            let middle = (low + high) / 2
            if time(elements[middle]) < start { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
