import Foundation
import RollupStore
import Rollups
import Testing

@testable import RollupStoreBenchmarks

/// Runs the query benchmark when `FLOWMETER_STORE_BENCH` is set (use a release build: `swift test -c release`);
/// it measures and prints, it does not assert timings.
@Suite struct RollupStoreBenchmarkTests {
    private static let isEnabled = ProcessInfo.processInfo.environment["FLOWMETER_STORE_BENCH"] != nil

    @Test(.enabled(if: isEnabled), arguments: [StoreKind.sqlite, .postgres])
    func queriesOverAMonthOfMinutes(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        let days = Int(ProcessInfo.processInfo.environment["FLOWMETER_STORE_BENCH_DAYS"] ?? "") ?? 30
        let report = try RollupStoreBenchmark.run(store: fixture.store, days: days, seriesCount: 50)
        print("[\(kind)] \(report)")
        #expect(report.seriesMinuteRows == days * 1440 * 50)
        #expect(report.timings.allSatisfy { $0.rows > 0 })
    }

    @Test func benchmarkRunsOnASmallStore() throws {
        let fixture = try StoreFixture(.sqlite)
        let report = try RollupStoreBenchmark.run(store: fixture.store, days: 1, seriesCount: 4, repetitions: 1)
        #expect(report.seriesMinuteRows == 1440 * 4)
        // The bulk path and the query path agree: the month's buckets add up to what was written.
        #expect(report.timings.allSatisfy { $0.rows > 0 })
    }

    /// The benchmark's bulk fill (hour rows and first-seen times computed outside the store) writes what `apply`
    /// would: every read answers the same for both.
    @Test(arguments: [StoreKind.sqlite, .postgres])
    func bulkFillReadsBackLikeApply(kind: StoreKind) throws {
        let applied = try StoreFixture(kind)
        let bulk = try StoreFixture(kind)
        let series = [RollupFactory.series(widget: "a"), RollupFactory.series(version: "2.0", widget: "b")]
        let versions = [RollupFactory.versionKey(), RollupFactory.versionKey(version: "2.0")]
        var seriesRollups: [SeriesRollup] = []
        var versionRollups: [VersionRollup] = []
        for minute in stride(from: Int64(0), to: 180, by: 7) {
            for (index, item) in series.enumerated() {
                seriesRollups.append(
                    RollupFactory.seriesRollup(
                        item, minute: minute, events: minute % 5 + Int64(index) + 1, installs: ["i-\(minute % 3)"],
                        second: 59 - minute % 50, release: "r@\(minute % 2)"))
            }
            for (index, key) in versions.enumerated() {
                versionRollups.append(
                    RollupFactory.versionRollup(
                        key, minute: minute, batches: minute % 4 + 1, decodes: Int64(index) + 3,
                        types: ["t\(minute % 3)"], schema: minute % 2 == 0 ? nil : Int(minute % 5)))
            }
        }
        var factory = RollupFactory()
        _ = try applied.store.apply(
            factory.partials(seriesRollups.map { .series($0) } + versionRollups.map { .version($0) }))
        let sql = try #require(bulk.store as? SQLRollupStore)
        try sql.bulkLoad(series: seriesRollups, versions: versionRollups)

        let from = RollupFactory.at(minute: 0)
        let to = RollupFactory.at(minute: 180)
        for store in [applied.store, bulk.store] {
            #expect(try store.seriesRollups(SeriesQuery(from: from, to: to)).count == seriesRollups.count)
        }
        #expect(
            try applied.store.seriesRollups(SeriesQuery(from: from, to: to))
                == bulk.store.seriesRollups(SeriesQuery(from: from, to: to)))
        // Whole hours: these read the hour tables the bulk fill computed in memory.
        let hourly = try applied.store.seriesBuckets(SeriesQuery(from: from, to: to), bucketSeconds: 3600)
        #expect(hourly.count == 6)
        #expect(hourly == (try bulk.store.seriesBuckets(SeriesQuery(from: from, to: to), bucketSeconds: 3600)))
        #expect(
            try applied.store.versionRollups(from: from, to: to, appID: nil)
                == bulk.store.versionRollups(from: from, to: to, appID: nil))
        #expect(
            try applied.store.versionBuckets(from: from, to: to, appID: nil, bucketSeconds: 3600)
                == bulk.store.versionBuckets(from: from, to: to, appID: nil, bucketSeconds: 3600))
        let firstSeen = try applied.store.firstSeen(appID: nil, kind: .unknownType, buildConfiguration: .release)
        #expect(firstSeen.count == 2)
        #expect(firstSeen == (try bulk.store.firstSeen(appID: nil, kind: .unknownType, buildConfiguration: .release)))
    }
}
