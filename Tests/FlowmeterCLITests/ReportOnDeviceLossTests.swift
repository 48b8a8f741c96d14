import FlowmeterCLI
import FlowmeterModels
import Foundation
import RollupStore
import Rollups
import TestSupport
import Testing

/// The weekly report's on-device loss per version: the events apps' SDKs dropped before sending (their
/// `clientReport`, carried in the version rollups) against the diagnostics that arrived.
@Suite struct ReportOnDeviceLossTests {
    @Test func eachVersionShowsWhatItsSDKDroppedAndTheShare() throws {
        let directory = try TemporaryDirectory(prefix: "flowmeter-report-loss")
        defer { directory.remove() }
        let store = try openRollupStore(url: directory.file("loss.sqlite"))
        let week = ISOWeek(year: 2026, week: 48)!
        let start = week.start.secondsSinceEpoch + 2 * 86_400 + 9 * 3_600
        var partials: [PartialRollup] = []
        func add(_ rollup: PartialRollup.Rollup) {
            partials.append(PartialRollup(id: "loss/1/\(partials.count)", collector: "loss", rollup: rollup))
        }
        var installs = HyperLogLog()
        for index in 0..<20 { installs.insert(installHash: "install-\(index)") }
        for (version, discarded, events) in [("5.2.1", Int64(25), Int64(75)), ("5.3.0", 0, 40)] {
            let key = VersionKey(
                appID: "com.example.shop", platform: "ios", appVersion: version, buildConfiguration: .release)
            for minute in Int64(0)..<2 {
                add(
                    .version(
                        VersionRollup(
                            key: key, window: MinuteWindow(start: start + minute * 60), batches: 10, cleanBatches: 5,
                            decodes: 100, installs: installs, clientDiscarded: minute == 0 ? discarded - 5 : 5)))
            }
            let series = RollupSeries(version: key, kind: .unknownType, widgetType: "hologram_projector")
            add(
                .series(
                    SeriesRollup(
                        series: series, window: MinuteWindow(start: start), events: events, installs: installs,
                        firstSeen: Timestamp(secondsSinceEpoch: start + 1),
                        lastSeen: Timestamp(secondsSinceEpoch: start + 2))))
        }
        _ = try store.apply(partials)
        let report = try WeeklyReportBuilder().report(
            reader: store, week: week, appID: nil, now: Timestamp(secondsSinceEpoch: week.end.secondsSinceEpoch + 60))
        let older = try #require(report.versions.first { $0.appVersion == "5.2.1" })
        #expect(older.clientDiscarded == 25)
        #expect(older.onDeviceLoss == 0.25)
        let newer = try #require(report.versions.first { $0.appVersion == "5.3.0" })
        #expect(newer.clientDiscarded == 0 && newer.onDeviceLoss == 0)
        #expect(report.markdown.contains("Lost on device"))
        #expect(report.markdown.contains("25 (25.00%)"))
        #expect(report.html.contains("Lost on device"))
        let json = report.jsonValue.serialized()
        #expect(json.contains(#""clientDiscarded":25"#) && json.contains(#""onDeviceLoss":0.25"#))
    }
}
