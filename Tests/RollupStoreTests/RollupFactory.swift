import FlowmeterModels
import Rollups

/// Deterministic partial rollups for the store tests.
struct RollupFactory {
    /// 2024-03-01T00:00:00Z, a whole hour.
    static let base: Int64 = 1_709_251_200
    private var sequence = 0
    var collector: String

    init(collector: String = "collector-a") {
        self.collector = collector
    }

    static func series(
        app: String = "com.example.shop", version: String = "1.0", configuration: BuildConfiguration = .release,
        kind: DiagnosticKind = .unknownType, widget: String = "hologram"
    ) -> RollupSeries {
        RollupSeries(
            appID: app, platform: "ios", appVersion: version, buildConfiguration: configuration, kind: kind,
            widgetType: widget)
    }

    static func versionKey(app: String = "com.example.shop", version: String = "1.0") -> VersionKey {
        VersionKey(appID: app, platform: "ios", appVersion: version, buildConfiguration: .release)
    }

    static func seriesRollup(
        _ series: RollupSeries, minute: Int64, events: Int64, installs: [String] = ["install-1"],
        second: Int64 = 5, release: String = "page-api@1", path: String = "Index 3.title"
    ) -> SeriesRollup {
        var sketch = HyperLogLog()
        for install in installs { sketch.insert(installHash: install) }
        let start = base + minute * 60
        return SeriesRollup(
            series: series, window: MinuteWindow(start: start), events: events, installs: sketch,
            firstSeen: Timestamp(secondsSinceEpoch: start + second, nanoseconds: 250_000_000),
            lastSeen: Timestamp(secondsSinceEpoch: start + second + 10), releases: [release: events],
            samples: [RollupSample(codingPath: path, message: "unknown type", pageID: "home")])
    }

    static func versionRollup(
        _ key: VersionKey, minute: Int64, batches: Int64, decodes: Int64, types: Set<String>, schema: Int? = 3
    ) -> VersionRollup {
        var sketch = HyperLogLog()
        sketch.insert(installHash: "install-\(minute)")
        return VersionRollup(
            key: key, window: MinuteWindow(start: base + minute * 60), batches: batches, cleanBatches: batches / 2,
            decodes: decodes, installs: sketch, registeredTypes: types, maxSchemaVersion: schema)
    }

    /// Wraps rollups as partials with fresh ids from this collector.
    mutating func partials(_ rollups: [PartialRollup.Rollup]) -> [PartialRollup] {
        rollups.map { rollup in
            sequence += 1
            return PartialRollup(id: "\(collector)-boot/\(sequence)/0", collector: collector, rollup: rollup)
        }
    }

    static func at(minute: Int64) -> Timestamp { Timestamp(secondsSinceEpoch: base + minute * 60) }
}
