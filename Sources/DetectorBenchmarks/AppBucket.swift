import FlowmeterModels
import Rollups

/// One app's generated traffic in one bucket, gathered into the rollups a collector would have written.
struct AppBucket {
    private struct SeriesSlot: Hashable {
        var version: String
        var kind: DiagnosticKind
        var widgetType: String
    }

    private struct SeriesTotals {
        var events: Int64 = 0
        var installs = HyperLogLog()
        var releases: [String: Int64] = [:]
    }

    private struct VersionTotals {
        var batches: Int64 = 0
        var installs = HyperLogLog()
    }

    let app: LongTraffic.App
    let window: MinuteWindow
    private let salt: UInt64
    /// The installs active in the bucket (with repeats).
    var activeInstalls: [Int] = []
    private var series: [SeriesSlot: SeriesTotals] = [:]
    private var versions: [String: VersionTotals] = [:]
    private var debugEvents: Int64?

    init(app: LongTraffic.App, window: MinuteWindow) {
        self.app = app
        self.window = window
        salt = HyperLogLog.hash(string: app.appID)
    }

    /// One batch from `install`.
    mutating func addBatch(install: Int, version: String) {
        versions[version, default: VersionTotals()].batches += 1
        versions[version, default: VersionTotals()].installs.insert(hash: hash(install))
    }

    /// One pre-aggregated event (`count` occurrences) from `install`.
    mutating func addEvents(
        _ count: Int64, kind: DiagnosticKind, widgetType: String, install: Int, version: String, release: String
    ) {
        let slot = SeriesSlot(version: version, kind: kind, widgetType: widgetType)
        series[slot, default: SeriesTotals()].events += count
        series[slot, default: SeriesTotals()].installs.insert(hash: hash(install))
        series[slot, default: SeriesTotals()].releases[release, default: 0] += count
    }

    /// A debug build's batch, with `events` of a type in development.
    mutating func addDebug(events: Int64) {
        debugEvents = events
    }

    var seriesRollups: [SeriesRollup] {
        var rollups = series.map { slot, totals in
            SeriesRollup(
                series: RollupSeries(
                    version: key(slot.version, .release), kind: slot.kind, widgetType: slot.widgetType),
                window: window, events: totals.events, installs: totals.installs, firstSeen: window.startTimestamp,
                lastSeen: window.startTimestamp, releases: totals.releases)
        }
        if let debugEvents, debugEvents > 0 {
            rollups.append(
                SeriesRollup(
                    series: RollupSeries(
                        version: key("5.4.0", .debug), kind: .unknownType, widgetType: "dev_playground"),
                    window: window, events: debugEvents, installs: HyperLogLog.single(hash(-1)),
                    firstSeen: window.startTimestamp, lastSeen: window.startTimestamp))
        }
        return rollups
    }

    var versionRollups: [VersionRollup] {
        var rollups = versions.map { version, totals in
            VersionRollup(
                key: key(version, .release), window: window, batches: totals.batches,
                decodes: app.sendsDecodes ? totals.batches * 6 : 0, installs: totals.installs)
        }
        if debugEvents != nil {
            rollups.append(
                VersionRollup(
                    key: key("5.4.0", .debug), window: window, batches: 1, decodes: app.sendsDecodes ? 6 : 0,
                    installs: HyperLogLog.single(hash(-1))))
        }
        return rollups
    }

    private func key(_ version: String, _ build: BuildConfiguration) -> VersionKey {
        VersionKey(appID: app.appID, platform: "ios", appVersion: version, buildConfiguration: build)
    }

    // The SplitMix64 finalizer of the install's number and the app: uniform 64-bit hashes, as HyperLogLog needs.
    private func hash(_ install: Int) -> UInt64 {
        var z = salt ^ UInt64(bitPattern: Int64(install)) &* 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension HyperLogLog {
    /// A sketch of one element.
    static func single(_ hash: UInt64) -> HyperLogLog {
        var sketch = HyperLogLog()
        sketch.insert(hash: hash)
        return sketch
    }
}
