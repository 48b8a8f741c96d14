import FlowmeterModels
import Foundation
import RollupStore
import Rollups
import TestSupport
import Testing

/// `flowmeter watch --once` over a store where one cause spikes in three versions right now: one alert, not four,
/// and it carries the owners file's team.
@Suite struct WatchIncidentTests {
    @Test func oneCauseInThreeVersionsOpensOneSpikeAlert() async throws {
        let directory = try TemporaryDirectory(prefix: "flowmeter-watch")
        defer { directory.remove() }
        let path = directory.file("flowmeter.sqlite")
        let store = try openRollupStore(url: path)
        // The last hour, minute by minute: three live versions with steady duplicate ids; from 20 minutes ago every
        // one of them reports `image_text_card` payloads missing a key.
        let now = Int64(Date().timeIntervalSince1970) / 60 * 60
        var rollups: [PartialRollup.Rollup] = []
        for minute in Int64(-60)..<1 {
            let start = now + minute * 60
            for version in ["5.1.0", "5.2.0", "5.2.1"] {
                let key = VersionKey(
                    appID: "com.example.shop", platform: "ios", appVersion: version, buildConfiguration: .release)
                rollups.append(.version(VersionRollup(key: key, window: MinuteWindow(start: start), batches: 10)))
                rollups.append(.series(Self.rollup(key, .duplicateID, "product_grid", start: start, events: 6)))
                if minute >= -20 {
                    rollups.append(
                        .series(Self.rollup(key, .malformedPayload, "image_text_card", start: start, events: 30)))
                }
            }
        }
        _ = try store.apply(
            rollups.enumerated().map { PartialRollup(id: "w/\($0.offset)", collector: "t", rollup: $0.element) })
        let owners = directory.file("owners.json")
        try Data(#"{"rules": [{"widgetType": "image_*", "team": "content"}]}"#.utf8)
            .write(to: URL(fileURLWithPath: owners))

        let result = try await FlowmeterExecutable.run(
            ["watch", "--once", "--store", path, "--owners", owners, "--log-format", "json"], timeout: .seconds(30))
        #expect(result.status == 3, "\(result.output) \(result.errors)")
        let lines = (result.output + result.errors).split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
        let pass = try #require(lines.first { $0["msg"] as? String == "watch pass" })
        #expect(pass["spikes"] as? String == "1", "one incident, one alert: \(pass)")
        let opened = lines.filter { $0["msg"] as? String == "alert opened" }.compactMap { $0["summary"] as? String }
        let incidents = opened.filter { $0.hasPrefix("Incident:") }
        #expect(incidents.count == 1, "\(opened)")
        #expect(
            incidents.first?.contains("malformedPayload for image_text_card in com.example.shop on 3 versions") == true)
        // The alert state in the store carries the team label.
        let alert = try #require(try store.openAlerts().first { $0.kind == .spike })
        #expect(alert.labels["team"] == "content")
        #expect(alert.labels["app_version"] == nil)
    }

    static func rollup(_ key: VersionKey, _ kind: DiagnosticKind, _ type: String, start: Int64, events: Int64)
        -> SeriesRollup
    {
        var installs = HyperLogLog()
        for index in 0..<10 { installs.insert(installHash: "\(key.appVersion)-\(index)") }
        let at = Timestamp(secondsSinceEpoch: start + 5)
        return SeriesRollup(
            series: RollupSeries(version: key, kind: kind, widgetType: type), window: MinuteWindow(start: start),
            events: events, installs: installs, firstSeen: at, lastSeen: at, releases: [:])
    }
}
