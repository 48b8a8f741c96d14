public import FlowmeterModels
public import Rollups

/// Finds manifests that traffic contradicts (``ManifestDrift``), over release builds in a window.
///
/// For each release series of an app version and platform whose manifests exist:
/// - `unknownType` for a type every one of that platform's manifests of the version lists is `listedTypeUnknown`;
/// - `malformedPayload` whose sampled messages name a missing key (Flow-UI's `Missing key 'imageURL'`, or Swift's
///   `keyNotFound` description) is `optionalKeyRequired` when the type's manifest keys end in that key only as
///   optional ones, and `unlistedKeyRequired` when no key of the type ends in it. A key the manifest requires is
///   what the manifest predicts: no drift. Messages that name no missing key (type mismatches) say nothing here.
/// Samples keep a few distinct messages per series and minute, so a rare key can go unseen; what is found is real.
public struct ManifestDriftFinder: Sendable {
    /// Creates a finder.
    public init() {}

    /// Reads the window's release `unknownType` and `malformedPayload` rollups and the manifests of `appID` (nil:
    /// every app) from `reader`.
    public func report(reader: some RollupReader, from: Timestamp, to: Timestamp, appID: String? = nil) throws
        -> ManifestDriftReport
    {
        let manifests = try reader.manifests(appID: appID)
        guard !manifests.isEmpty else { return ManifestDriftReport(from: from, to: to, manifestCount: 0, drift: []) }
        let rollups = try reader.seriesRollups(
            SeriesQuery(
                from: from, to: to, appID: appID, kinds: [.unknownType, .malformedPayload],
                buildConfiguration: .release))
        return report(from: from, to: to, manifests: manifests, seriesRollups: rollups)
    }

    /// The pure core of ``report(reader:from:to:appID:)``: only release rollups in [`from`, `to`) count.
    public func report(
        from: Timestamp, to: Timestamp, manifests: [CapabilityManifest], seriesRollups: [SeriesRollup]
    ) -> ManifestDriftReport {
        let index = ManifestIndex(manifests: manifests)
        let window = from.secondsSinceEpoch..<to.secondsSinceEpoch
        struct Key: Hashable {
            var series: RollupSeries
            var missingKey: String?
        }
        var found: [Key: (events: Int64, lastSeen: Timestamp, reason: ManifestDrift.Reason)] = [:]
        for rollup in seriesRollups
        where rollup.series.buildConfiguration == .release && window.contains(rollup.window.start)
            && !rollup.series.widgetType.isEmpty
        {
            let series = rollup.series
            guard let shape = index.platforms[series.appID]?[series.appVersion]?[series.platform],
                let typeShape = shape.types[series.widgetType]
            else { continue }
            var drifts: [(String?, ManifestDrift.Reason)] = []
            if series.kind == .unknownType {
                drifts.append((nil, .listedTypeUnknown))
            } else if series.kind == .malformedPayload {
                let keys = Set(rollup.samples.compactMap { $0.message.flatMap(Self.missingKey(in:)) })
                for key in keys.sorted() {
                    if let reason = Self.reason(missing: key, shape: typeShape) { drifts.append((key, reason)) }
                }
            }
            for (key, reason) in drifts {
                let slot = Key(series: series, missingKey: key)
                let seen = found[slot]
                found[slot] = (
                    (seen?.events ?? 0) + rollup.events, max(seen?.lastSeen ?? rollup.lastSeen, rollup.lastSeen),
                    reason
                )
            }
        }
        let drift = found.map { key, value in
            let builds =
                (index.platforms[key.series.appID]?[key.series.appVersion]?[key.series.platform]?.manifests ?? [])
                .map(\.build).sorted()
            return ManifestDrift(
                appID: key.series.appID, appVersion: key.series.appVersion, platform: key.series.platform,
                widgetType: key.series.widgetType, kind: key.series.kind, key: key.missingKey, reason: value.reason,
                events: value.events, builds: builds, lastSeen: value.lastSeen)
        }
        .sorted { a, b in
            if a.appID != b.appID { return a.appID < b.appID }
            if a.appVersion != b.appVersion { return VersionOrder.less(a.appVersion, b.appVersion) }
            if a.platform != b.platform { return a.platform < b.platform }
            if a.widgetType != b.widgetType { return a.widgetType < b.widgetType }
            return (a.key ?? "") < (b.key ?? "")
        }
        return ManifestDriftReport(from: from, to: to, manifestCount: manifests.count, drift: drift)
    }

    /// How a manifest that reads `shape` contradicts a report that `key` was missing; nil when it predicts it.
    static func reason(missing key: String, shape: CapabilityManifest.TypeShape) -> ManifestDrift.Reason? {
        func ends(_ path: String) -> Bool {
            ManifestKeyPath(path)?.segments.last?.name == key
        }
        if shape.required.contains(where: ends) { return nil }
        return shape.optional.contains(where: ends) ? .optionalKeyRequired : .unlistedKeyRequired
    }

    /// The key a missing-key message names: `Missing key 'imageURL'` (Flow-UI and the collector), or Swift's
    /// `No value associated with key CodingKeys(stringValue: "imageURL", …)`; nil for any other message.
    public static func missingKey(in message: String) -> String? {
        if let range = message.range(of: "Missing key '") {
            let rest = message[range.upperBound...]
            guard let end = rest.firstIndex(of: "'"), end > rest.startIndex else { return nil }
            return String(rest[..<end])
        }
        if message.contains("No value associated with key"), let range = message.range(of: "stringValue: \"") {
            let rest = message[range.upperBound...]
            guard let end = rest.firstIndex(of: "\""), end > rest.startIndex else { return nil }
            return String(rest[..<end])
        }
        return nil
    }
}
