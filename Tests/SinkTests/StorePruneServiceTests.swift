import FlowmeterModels
import Foundation
import RollupStore
import Rollups
import Sink
import Synchronization
import TestSupport
import Testing

/// Retention inside a running sink: the prune service prunes at start (and every interval) and stops when cancelled.
@Suite struct StorePruneServiceTests {
    @Test func theServicePrunesAtStartAndStopsWhenCancelled() async throws {
        let directory = try TemporaryDirectory(prefix: "flowmeter-prune")
        defer { directory.remove() }
        let store = try #require(
            try openRollupStore(url: directory.file("flowmeter.sqlite")) as? any RollupStoreMaintenance)
        // One rollup an hour for the last three days.
        let now = Int64(Date().timeIntervalSince1970)
        let series = RollupSeries(
            appID: "com.example.shop", platform: "ios", appVersion: "5.2.1", buildConfiguration: .release,
            kind: .unknownType, widgetType: "hologram")
        let partials = (0..<72).map { hour -> PartialRollup in
            let start = MinuteWindow(containing: Timestamp(secondsSinceEpoch: now - Int64(hour) * 3600)).start
            return PartialRollup(
                id: "prune-test/\(hour)/0", collector: "prune-test",
                rollup: .series(
                    SeriesRollup(
                        series: series, window: MinuteWindow(start: start), events: 1,
                        firstSeen: Timestamp(secondsSinceEpoch: start), lastSeen: Timestamp(secondsSinceEpoch: start))))
        }
        _ = try store.apply(partials)
        var policy = RetentionPolicy()
        policy.keepMinutes = 6 * 3600
        policy.keepHours = 48 * 3600
        policy.batchRows = 10
        let lines = Mutex<[(String, [String: String])]>([])
        let service = StorePruneService(
            store: store, policy: policy, every: .seconds(3600),
            log: { _, message, fields in lines.withLock { $0.append((message, fields)) } })
        let running = Task { try await service.run() }
        _ = await eventually(every: .milliseconds(50)) { !lines.withLock({ $0.isEmpty }) }
        running.cancel()
        try await running.value

        let logged = try #require(lines.withLock { $0.first })
        #expect(logged.0 == "store pruned")
        #expect(logged.1["complete"] == "true")
        #expect(Int(logged.1["batches"] ?? "") ?? 0 > 1)
        let stats = try store.stats()
        let minutes = try #require(stats.tables.first { $0.name == "series_minutes" })
        let hours = try #require(stats.tables.first { $0.name == "series_hours" })
        let minuteCut = (now - 6 * 3600) / 3600 * 3600
        let hourCut = (now - 48 * 3600) / 3600 * 3600
        #expect((minutes.oldestWindow?.secondsSinceEpoch ?? 0) >= minuteCut)
        #expect((hours.oldestWindow?.secondsSinceEpoch ?? 0) >= hourCut)
        #expect(minutes.rows >= 6 && minutes.rows <= 7)
        #expect(hours.rows >= 48 && hours.rows <= 49)
    }
}
