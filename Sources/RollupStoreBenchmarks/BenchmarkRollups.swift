import FlowmeterModels
import Foundation
import Rollups

/// The rollups the store benchmark writes: a month of minutes for a spread of series and their app builds.
enum BenchmarkRollups {
    /// Series spread over three apps, two versions, both build configurations, several kinds and widget types.
    static func series(count: Int) -> [RollupSeries] {
        let kinds: [DiagnosticKind] = [.unknownType, .unknownType, .malformedPayload, .droppedElement]
        return (0..<count).map { index in
            RollupSeries(
                appID: "com.example.app\(index % 3)", platform: index % 2 == 0 ? "ios" : "android",
                appVersion: "5.\(index % 2)", buildConfiguration: index % 5 == 4 ? .debug : .release,
                kind: kinds[index % kinds.count], widgetType: "widget_\(index)")
        }
    }

    /// The minute rollup of the `index`th series in `window`.
    static func rollup(_ series: RollupSeries, index: Int, window: MinuteWindow) -> SeriesRollup {
        // A daily cycle plus per-series scale: realistic enough for query costs, which do not depend on values.
        let phase = Double((window.start / 60 + Int64(index) * 37) % 1440) / 1440
        let events = Int64(3 + Double(index % 7 + 1) * 10 * (1 + sin(phase * 2 * .pi)))
        var installs = HyperLogLog()
        for install in 0..<Int(1 + events % 3) {
            installs.insert(
                hash: UInt64(truncatingIfNeeded: window.start &* 31 &+ Int64(index * 7 + install))
                    &* 0x9E37_79B9_7F4A_7C15)
        }
        return SeriesRollup(
            series: series, window: window, events: events, installs: installs,
            firstSeen: Timestamp(secondsSinceEpoch: window.start + 1),
            lastSeen: Timestamp(secondsSinceEpoch: window.start + 58),
            releases: ["page-api@2026.\(window.start / 86_400 % 5)": events],
            samples: [RollupSample(codingPath: "Index 1.children", message: "unknown type", pageID: "home")])
    }

    /// The minute rollup of the `index`th app build in `window`.
    static func versionRollup(_ key: VersionKey, index: Int, window: MinuteWindow) -> VersionRollup {
        var installs = HyperLogLog()
        installs.insert(hash: UInt64(truncatingIfNeeded: window.start &+ Int64(index)) &* 0x9E37_79B9_7F4A_7C15)
        return VersionRollup(
            key: key, window: window, batches: 40, cleanBatches: 30, decodes: 400, installs: installs,
            registeredTypes: ["hero", "grid", "carousel"], maxSchemaVersion: 3)
    }
}
