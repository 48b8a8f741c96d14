public import FlowmeterModels
import Synchronization

/// A rollup store in memory: the simple, obviously correct reference that the SQLite and PostgreSQL stores are
/// tested against, and what detector tests read from.
///
/// Thread-safe (one `Mutex`); nothing is persisted and applied ids are never pruned.
public final class InMemoryRollupStore: RollupReader {
    private struct SeriesSlot: Hashable {
        var series: RollupSeries
        var window: MinuteWindow
    }

    private struct VersionSlot: Hashable {
        var key: VersionKey
        var window: MinuteWindow
    }

    private struct State {
        var series: [SeriesSlot: SeriesRollup] = [:]
        var versions: [VersionSlot: VersionRollup] = [:]
        var appliedIDs: Set<String> = []
        var deploys: [String: DeployMarker] = [:]
        var alerts: [String: AlertState] = [:]
        var manifests: [CapabilityManifest.Identity: CapabilityManifest] = [:]
        var watermarks: [WatermarkSlot: CollectorWatermark] = [:]
        var partitions: [WatermarkSlot: PartitionRow] = [:]
    }

    /// One partition's stored position, with its counted batches.
    private struct PartitionRow {
        var partitions: Int
        var nextOffset: Int64
        var completeUpTo: Timestamp?
        var counted: [String: Int64] = [:]
    }

    private struct WatermarkSlot: Hashable {
        var collector: String
        var partition: Int
    }

    private let state = Mutex(State())

    /// Creates an empty store.
    public init() {}

    /// Merges partial rollups; ids applied before (or earlier in the same list) are skipped and counted as
    /// duplicates.
    public func apply(_ partials: [PartialRollup]) throws -> RollupApplyResult {
        state.withLock { state in
            var result = RollupApplyResult(applied: 0, duplicates: 0)
            for partial in partials {
                guard state.appliedIDs.insert(partial.id).inserted else {
                    result.duplicates += 1
                    continue
                }
                result.applied += 1
                switch partial.rollup {
                case .series(let rollup): Self.merge(rollup, into: &state)
                case .version(let rollup): Self.merge(rollup, into: &state)
                }
            }
            return result
        }
    }

    private static func merge(_ rollup: SeriesRollup, into state: inout State) {
        let slot = SeriesSlot(series: rollup.series, window: rollup.window)
        if state.series[slot] != nil {
            state.series[slot]!.merge(rollup)
        } else {
            state.series[slot] = rollup
        }
    }

    private static func merge(_ rollup: VersionRollup, into state: inout State) {
        let slot = VersionSlot(key: rollup.key, window: rollup.window)
        if state.versions[slot] != nil {
            state.versions[slot]!.merge(rollup)
        } else {
            state.versions[slot] = rollup
        }
    }

    /// Applies `steps` together when every partition's stored offset is still its step's start; throws
    /// ``PartitionFenced`` (and applies none) otherwise.
    public func commit(_ steps: [PartitionStep]) throws {
        try state.withLock { state throws(PartitionFenced) in
            for step in steps {
                let stored = state.partitions[WatermarkSlot(collector: step.topic, partition: step.partition)]
                guard stored?.nextOffset == step.startOffset else {
                    throw PartitionFenced(
                        partition: step.partition, expected: step.startOffset, stored: stored?.nextOffset)
                }
            }
            for step in steps {
                for rollup in step.series { Self.merge(rollup, into: &state) }
                for rollup in step.versions { Self.merge(rollup, into: &state) }
                let slot = WatermarkSlot(collector: step.topic, partition: step.partition)
                var row =
                    state.partitions[slot] ?? PartitionRow(partitions: step.partitions, nextOffset: step.nextOffset)
                row.partitions = step.partitions
                row.nextOffset = step.nextOffset
                if let complete = step.completeUpTo { row.completeUpTo = max(complete, row.completeUpTo ?? complete) }
                for batch in step.counted { row.counted[batch.key] = batch.receivedAt }
                row.counted = row.counted.filter { $0.value >= step.forgetBefore }
                state.partitions[slot] = row
            }
        }
    }

    /// The partition's stored offset and counted batches.
    public func position(topic: String, partition: Int) throws -> PartitionPosition {
        state.withLock { state in
            guard let row = state.partitions[WatermarkSlot(collector: topic, partition: partition)] else {
                return PartitionPosition(nextOffset: nil)
            }
            return PartitionPosition(
                nextOffset: row.nextOffset,
                counted: row.counted.map { CountedBatch(key: $0.key, receivedAt: $0.value) }.sorted {
                    ($0.receivedAt, $0.key) < ($1.receivedAt, $1.key)
                })
        }
    }

    /// Keeps each watermark unless a newer one of the same collector and partition is held
    /// (``CollectorWatermark/supersedes(_:)``).
    public func recordWatermarks(_ watermarks: [CollectorWatermark]) throws {
        state.withLock { state in
            for watermark in watermarks {
                let slot = WatermarkSlot(collector: watermark.collector, partition: watermark.partition)
                if state.watermarks[slot].map({ watermark.supersedes($0) }) ?? true {
                    state.watermarks[slot] = watermark
                }
            }
        }
    }

    /// The watermarks held, ordered by collector, then partition; nothing is ever pruned here.
    public func freshness() throws -> StoreFreshness {
        state.withLock { state in
            var watermarks = Array(state.watermarks.values)
            for (slot, row) in state.partitions {
                guard let complete = row.completeUpTo else { continue }
                watermarks.append(
                    CollectorWatermark(
                        collector: slot.collector, partition: slot.partition, partitions: row.partitions,
                        completeUpTo: complete))
            }
            return StoreFreshness(
                watermarks: watermarks.sorted {
                    $0.collector != $1.collector
                        ? utf8Less($0.collector, $1.collector) : $0.partition < $1.partition
                })
        }
    }

    /// Stores a deploy marker, replacing one with the same id.
    public func recordDeploy(_ deploy: DeployMarker) throws {
        state.withLock { $0.deploys[deploy.id] = deploy }
    }

    /// Stores a capability manifest, replacing the same build's unless that one was uploaded later.
    public func recordManifest(_ manifest: CapabilityManifest) throws {
        state.withLock { state in
            let epoch = Timestamp(secondsSinceEpoch: 0)
            if let stored = state.manifests[manifest.identity],
                (stored.uploadedAt ?? epoch) > (manifest.uploadedAt ?? epoch)
            {
                return
            }
            state.manifests[manifest.identity] = manifest
        }
    }

    /// The manifests of `appID` (nil: every app), in ``CapabilityManifest/storeOrder(_:_:)``.
    public func manifests(appID: String?) throws -> [CapabilityManifest] {
        state.withLock { state in
            state.manifests.values.filter { appID == nil || $0.appID == appID }.sorted(
                by: CapabilityManifest.storeOrder)
        }
    }

    /// Deploy markers that finished in `from..<to`, ordered by `finishedAt`, then id.
    public func deploys(from: Timestamp, to: Timestamp) throws -> [DeployMarker] {
        state.withLock { state in
            state.deploys.values.filter { from <= $0.finishedAt && $0.finishedAt < to }
                .sorted { ($0.finishedAt, $0.id.utf8Key) < ($1.finishedAt, $1.id.utf8Key) }
        }
    }

    /// Series rollups in range and matching the filters, ordered by window, then series.
    public func seriesRollups(_ query: SeriesQuery) throws -> [SeriesRollup] {
        state.withLock { state in
            state.series.values.filter { query.matches($0.series, window: $0.window) }
                .sorted { $0.window != $1.window ? $0.window < $1.window : $0.series < $1.series }
        }
    }

    /// Events per series per bucket, ordered by bucket start, then series.
    public func seriesBuckets(_ query: SeriesQuery, bucketSeconds: Int64) throws -> [SeriesBucket] {
        var sums: [SeriesBucketKey: Int64] = [:]
        for rollup in try seriesRollups(query) {
            let key = SeriesBucketKey(
                series: rollup.series, bucketStart: rollup.window.bucketStart(bucketSeconds: bucketSeconds))
            sums[key, default: 0] += rollup.events
        }
        return sums.map { SeriesBucket(series: $0.key.series, bucketStart: $0.key.bucketStart, events: $0.value) }
            .sorted { $0.bucketStart != $1.bucketStart ? $0.bucketStart < $1.bucketStart : $0.series < $1.series }
    }

    private struct SeriesBucketKey: Hashable {
        var series: RollupSeries
        var bucketStart: Int64
    }

    /// Version rollups in range (and of `appID` when given), ordered by window, then key.
    public func versionRollups(from: Timestamp, to: Timestamp, appID: String?) throws -> [VersionRollup] {
        let range = SeriesQuery(from: from, to: to)
        return state.withLock { state in
            state.versions.values
                .filter { range.contains(windowStart: $0.window.start) && (appID == nil || $0.key.appID == appID) }
                .sorted { $0.window != $1.window ? $0.window < $1.window : $0.key < $1.key }
        }
    }

    /// Traffic per app build per bucket, ordered by bucket start, then key.
    public func versionBuckets(
        from: Timestamp, to: Timestamp, appID: String?, bucketSeconds: Int64
    ) throws -> [VersionBucket] {
        var buckets: [VersionBucketKey: VersionBucket] = [:]
        for rollup in try versionRollups(from: from, to: to, appID: appID) {
            let start = rollup.window.bucketStart(bucketSeconds: bucketSeconds)
            let slot = VersionBucketKey(key: rollup.key, bucketStart: start)
            var bucket =
                buckets[slot]
                ?? VersionBucket(key: rollup.key, bucketStart: start, batches: 0, cleanBatches: 0, decodes: 0)
            bucket.batches += rollup.batches
            bucket.cleanBatches += rollup.cleanBatches
            bucket.decodes += rollup.decodes
            buckets[slot] = bucket
        }
        return buckets.values.sorted {
            $0.bucketStart != $1.bucketStart ? $0.bucketStart < $1.bucketStart : $0.key < $1.key
        }
    }

    private struct VersionBucketKey: Hashable {
        var key: VersionKey
        var bucketStart: Int64
    }

    /// The earliest `firstSeen` per (appID, widgetType) of `kind` in `buildConfiguration` builds, ordered by appID,
    /// then widgetType.
    public func firstSeen(
        appID: String?, kind: DiagnosticKind, buildConfiguration: BuildConfiguration
    ) throws -> [TypeFirstSeen] {
        state.withLock { state in
            var earliest: [TypeKey: Timestamp] = [:]
            for rollup in state.series.values {
                let series = rollup.series
                guard series.kind == kind, series.buildConfiguration == buildConfiguration,
                    appID == nil || series.appID == appID
                else { continue }
                let key = TypeKey(appID: series.appID, widgetType: series.widgetType)
                earliest[key] = min(earliest[key] ?? rollup.firstSeen, rollup.firstSeen)
            }
            return earliest.map {
                TypeFirstSeen(appID: $0.key.appID, widgetType: $0.key.widgetType, kind: kind, firstSeen: $0.value)
            }
            .sorted {
                $0.appID != $1.appID ? utf8Less($0.appID, $1.appID) : utf8Less($0.widgetType, $1.widgetType)
            }
        }
    }

    private struct TypeKey: Hashable {
        var appID: String
        var widgetType: String
    }

    /// Stores alert states, replacing any with the same fingerprint.
    public func saveAlertState(_ alerts: [AlertState]) throws {
        state.withLock { state in
            for alert in alerts { state.alerts[alert.fingerprint] = alert }
        }
    }

    /// The alerts without `resolvedAt`, ordered by fingerprint.
    public func openAlerts() throws -> [AlertState] {
        state.withLock { state in
            state.alerts.values.filter(\.isOpen).sorted { utf8Less($0.fingerprint, $1.fingerprint) }
        }
    }
}

extension String {
    /// The UTF-8 bytes as an array, for tuple comparisons in binary-collation order.
    fileprivate var utf8Key: UTF8Key { UTF8Key(string: self) }
}

/// A string that compares by UTF-8 bytes.
private struct UTF8Key: Comparable {
    var string: String
    static func < (lhs: UTF8Key, rhs: UTF8Key) -> Bool { utf8Less(lhs.string, rhs.string) }
}
