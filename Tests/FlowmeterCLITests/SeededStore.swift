import FlowmeterModels
import Foundation
import RollupStore
import Rollups
import TestSupport

/// A temporary SQLite store holding a known scenario, applied through the store's `apply` like a sink would.
///
/// The window is 2026-11-30 06:00–10:00 UTC. App `com.example.shop` sends capabilities:
/// - 5.2.1: 40 installs, registers title_block, image_text_card, accordion, promo_banner, video_tile;
///   reports `hologram_projector` as unknownType (30 installs, 100 events from 08:47, release page-api@2026.11.30-2);
/// - 5.3.0: 50 installs, registers those and hologram_projector;
/// - 5.4.0: 10 installs, the same as 5.3.0.
/// `image_text_card` is malformed in 5.3.0 (10 events in the window, 4 in the previous window); `video_tile` is
/// malformed at 2 events per 5 minutes from 06:00, then 200 at 09:30 (a spike).
/// App `com.example.reader` sends no capabilities: 2.0 (20 installs) and 1.9 (5 installs), and 1.9 reports
/// `promo_banner` as unknownType (3 events).
/// A deploy of page-api 2026.11.30-2 finished at 08:44:10.
final class SeededStore: Sendable {
    let directory: TemporaryDirectory
    let path: String
    static let from = "2026-11-30T06:00:00Z"
    static let to = "2026-11-30T10:00:00Z"
    static let shopTypes: Set<String> = ["title_block", "image_text_card", "accordion", "promo_banner", "video_tile"]

    init() throws {
        directory = try TemporaryDirectory(prefix: "flowmeter-cli")
        path = directory.file("flowmeter.sqlite")
        let store = try openRollupStore(url: path)
        var rollups: [PartialRollup.Rollup] = []
        let shop = "com.example.shop"
        for minute in stride(from: Int64(0), to: 240, by: 10) {
            rollups.append(.version(Self.traffic(shop, "5.2.1", minute: minute, installs: 40, types: Self.shopTypes)))
            let newer = Self.shopTypes.union(["hologram_projector"])
            rollups.append(.version(Self.traffic(shop, "5.3.0", minute: minute, installs: 50, types: newer)))
            rollups.append(.version(Self.traffic(shop, "5.4.0", minute: minute, installs: 10, types: newer)))
            rollups.append(.version(Self.traffic("com.example.reader", "2.0", minute: minute, installs: 20, types: [])))
            rollups.append(.version(Self.traffic("com.example.reader", "1.9", minute: minute, installs: 5, types: [])))
        }
        for minute in stride(from: Int64(167), to: 227, by: 6) {
            rollups.append(
                .series(
                    Self.events(
                        shop, "5.2.1", .unknownType, "hologram_projector", minute: minute, events: 10, installs: 30,
                        release: "page-api@2026.11.30-2")))
        }
        rollups.append(
            .series(Self.events(shop, "5.3.0", .malformedPayload, "image_text_card", minute: 30, events: 10)))
        rollups.append(
            .series(Self.events(shop, "5.3.0", .malformedPayload, "image_text_card", minute: -60, events: 4)))
        for minute in stride(from: Int64(0), to: 210, by: 5) {
            rollups.append(
                .series(Self.events(shop, "5.3.0", .malformedPayload, "video_tile", minute: minute, events: 2)))
        }
        rollups.append(
            .series(Self.events(shop, "5.3.0", .malformedPayload, "video_tile", minute: 210, events: 200, installs: 40))
        )
        rollups.append(
            .series(Self.events("com.example.reader", "1.9", .unknownType, "promo_banner", minute: 60, events: 3)))
        let partials = rollups.enumerated().map { index, rollup in
            PartialRollup(id: "seed/\(index)", collector: "test", rollup: rollup)
        }
        _ = try store.apply(partials)
        try store.recordDeploy(
            DeployMarker(
                id: "deploy-1", service: "page-api", version: "2026.11.30-2",
                finishedAt: Timestamp(rfc3339: "2026-11-30T08:44:10Z")!))
    }

    /// The window's options for a query.
    var window: [String] { ["--from", Self.from, "--to", Self.to, "--store", path] }

    static func start(minute: Int64) -> Int64 {
        Timestamp(rfc3339: from)!.secondsSinceEpoch + minute * 60
    }

    static func sketch(_ count: Int, prefix: String) -> HyperLogLog {
        var sketch = HyperLogLog()
        for index in 0..<count { sketch.insert(installHash: "\(prefix)-install-\(index)") }
        return sketch
    }

    static func traffic(_ app: String, _ version: String, minute: Int64, installs: Int, types: Set<String>)
        -> VersionRollup
    {
        VersionRollup(
            key: VersionKey(appID: app, platform: "ios", appVersion: version, buildConfiguration: .release),
            window: MinuteWindow(start: start(minute: minute)), batches: 20, cleanBatches: 15, decodes: 200,
            installs: sketch(installs, prefix: "\(app)-\(version)"), registeredTypes: types,
            maxSchemaVersion: types.isEmpty ? nil : 7)
    }

    static func events(
        _ app: String, _ version: String, _ kind: DiagnosticKind, _ type: String, minute: Int64, events: Int64,
        installs: Int = 1, release: String? = nil
    ) -> SeriesRollup {
        let at = Timestamp(secondsSinceEpoch: start(minute: minute) + 5)
        return SeriesRollup(
            series: RollupSeries(
                appID: app, platform: "ios", appVersion: version, buildConfiguration: .release, kind: kind,
                widgetType: type),
            window: MinuteWindow(start: start(minute: minute)), events: events,
            installs: sketch(installs, prefix: "\(app)-\(version)"), firstSeen: at, lastSeen: at,
            releases: release.map { [$0: events] } ?? [:])
    }
}
