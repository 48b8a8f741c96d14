import FlowmeterModels
import Foundation
import RollupStore
import Rollups
import Synchronization
import TestSupport
import Testing

@testable import RollupStoreBenchmarks

/// Retention on SQLite and PostgreSQL, over a store seeded with 40 days: old minutes go (their hours stay and
/// answer for them), old hours go, in bounded batches; SQLite returns the space.
@Suite struct RetentionStoreTests {
    /// 40 days of one series and one app build every 10 minutes, from the factory's base; returns the rollups.
    private static func seed(_ store: any RollupStore) throws -> (series: [SeriesRollup], versions: [VersionRollup]) {
        let series = [RollupFactory.series(widget: "a"), RollupFactory.series(version: "2.0", widget: "b")]
        var seriesRollups: [SeriesRollup] = []
        var versionRollups: [VersionRollup] = []
        for minute in stride(from: Int64(0), to: 40 * 1440, by: 10) {
            for (index, item) in series.enumerated() {
                seriesRollups.append(
                    RollupFactory.seriesRollup(item, minute: minute, events: minute % 7 + Int64(index) + 1))
            }
            versionRollups.append(
                RollupFactory.versionRollup(
                    RollupFactory.versionKey(), minute: minute, batches: minute % 3 + 1, decodes: 4, types: ["a"]))
        }
        let sql = try #require(store as? SQLRollupStore)
        try sql.bulkLoad(series: seriesRollups, versions: versionRollups)
        return (seriesRollups, versionRollups)
    }

    private static let day: Int64 = 86_400
    private static let now = Timestamp(secondsSinceEpoch: RollupFactory.base + 40 * day)

    private static func events(_ rollups: [SeriesRollup], from: Int64, to: Int64) -> Int64 {
        rollups.filter { $0.window.start >= from && $0.window.start < to }.reduce(0) { $0 + $1.events }
    }

    @Test(arguments: [StoreKind.sqlite, .postgres])
    func pruningAFortyDayStoreKeepsMinutesTwoWeeksAndHoursAMonth(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        let seeded = try Self.seed(fixture.store)
        let store = try #require(fixture.store as? any RollupStoreMaintenance)
        let before = try store.stats()
        var policy = RetentionPolicy()
        policy.keepMinutes = 14 * Self.day
        policy.keepHours = 30 * Self.day
        policy.batchRows = 1_000
        let report = try store.prune(policy, now: Self.now, shouldContinue: { true })

        let minutesCut = RollupFactory.base + 26 * Self.day
        let hoursCut = RollupFactory.base + 10 * Self.day
        #expect(report.minutesBefore.secondsSinceEpoch == minutesCut)
        #expect(report.hoursBefore.secondsSinceEpoch == hoursCut)
        #expect(report.isComplete)
        // 26 days of minutes of two series and one build at 144 windows a day; 10 days of hours of three keys.
        #expect(report.minuteRows == 26 * 144 * 3)
        #expect(report.hourRows == 10 * 24 * 3)
        #expect(report.batches > report.minuteRows / policy.batchRows, "bounded batches: \(report.batches)")

        let after = try store.stats()
        let table = { (name: String) in after.tables.first { $0.name == name } }
        let minuteRows = table("series_minutes")?.rows
        #expect(minuteRows == Int64(14 * 144 * 2))
        #expect(table("series_minutes")?.oldestWindow?.secondsSinceEpoch == minutesCut)
        #expect(table("version_minutes")?.oldestWindow?.secondsSinceEpoch == minutesCut)
        #expect(table("series_hours")?.oldestWindow?.secondsSinceEpoch == hoursCut)
        #expect(table("series_hours")?.newestWindow == before.tables.first { $0.name == "series_hours" }?.newestWindow)
        #expect(
            after.retention == RetentionHorizon(minutesBefore: report.minutesBefore, hoursBefore: report.hoursBefore))
        #expect(try store.freshness().retention == after.retention)

        // The last two weeks read as before, minute by minute.
        let recent = SeriesQuery(from: Timestamp(secondsSinceEpoch: minutesCut), to: Self.now)
        #expect(
            try store.seriesRollups(recent) == seeded.series.filter { recent.contains(windowStart: $0.window.start) })
        // Days 10 to 26 are read from the hour rows: one rollup per hour at its start, the hour's events in it.
        let coarse = SeriesQuery(
            from: Timestamp(secondsSinceEpoch: RollupFactory.base + 20 * Self.day),
            to: Timestamp(secondsSinceEpoch: RollupFactory.base + 21 * Self.day))
        let hourly = try store.seriesRollups(coarse)
        #expect(hourly.count == 24 * 2)
        #expect(hourly.allSatisfy { $0.window.start % 3600 == 0 })
        #expect(
            hourly.reduce(0) { $0 + $1.events }
                == Self.events(
                    seeded.series, from: coarse.from.secondsSinceEpoch, to: coarse.to.secondsSinceEpoch))
        let fiveMinutes = try store.seriesBuckets(coarse, bucketSeconds: 300)
        #expect(fiveMinutes.reduce(0) { $0 + $1.events } == hourly.reduce(0) { $0 + $1.events })
        let versions = try store.versionRollups(from: coarse.from, to: coarse.to, appID: nil)
        #expect(versions.count == 24 && versions.allSatisfy { $0.window.start % 3600 == 0 })
        // A range across the minute horizon reads hours before it and minutes after it.
        let across = SeriesQuery(
            from: Timestamp(secondsSinceEpoch: minutesCut - 2 * 3600),
            to: Timestamp(secondsSinceEpoch: minutesCut + 2 * 3600))
        #expect(
            try store.seriesBuckets(across, bucketSeconds: 60).reduce(0) { $0 + $1.events }
                == Self.events(
                    seeded.series, from: across.from.secondsSinceEpoch, to: across.to.secondsSinceEpoch))
        // Nothing is left before the hour horizon.
        let gone = SeriesQuery(from: RollupFactory.at(minute: 0), to: Timestamp(secondsSinceEpoch: hoursCut))
        #expect(try store.seriesRollups(gone).isEmpty)

        if kind == .sqlite {
            #expect(after.reclaimsIncrementally == true)
            #expect((report.reclaimedPages ?? 0) > 0)
            #expect(after.totalBytes < before.totalBytes)
            #expect(after.freeBytes == 0)
        } else {
            #expect(report.reclaimedPages == nil)
        }
        // Once pruned, the next prune finds nothing.
        let again = try store.prune(policy, now: Self.now, shouldContinue: { true })
        #expect(again.deletedRows == 0 && again.isComplete)
    }

    @Test(arguments: [StoreKind.sqlite, .postgres])
    func aPruneToldToStopLeavesTheRestForTheNext(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        _ = try Self.seed(fixture.store)
        let store = try #require(fixture.store as? any RollupStoreMaintenance)
        var policy = RetentionPolicy()
        policy.keepMinutes = 14 * Self.day
        policy.keepHours = 30 * Self.day
        policy.batchRows = 500
        let batches = Counter()
        let first = try store.prune(policy, now: Self.now, shouldContinue: { batches.increment() <= 3 })
        #expect(!first.isComplete)
        #expect(first.minuteRows == 3 * 500)
        // Reads already switched to hours before the horizon, so the half-pruned range answers whole.
        let coarse = SeriesQuery(
            from: Timestamp(secondsSinceEpoch: RollupFactory.base + 11 * Self.day),
            to: Timestamp(secondsSinceEpoch: RollupFactory.base + 25 * Self.day))
        let total = try store.seriesRollups(coarse).reduce(0) { $0 + $1.events }
        let rest = try store.prune(policy, now: Self.now, shouldContinue: { true })
        #expect(rest.isComplete)
        #expect(first.minuteRows + rest.minuteRows == 26 * 144 * 3)
        #expect(try store.seriesRollups(coarse).reduce(0) { $0 + $1.events } == total)
    }

    @Test func anSQLiteFileMadeBeforeIncrementalVacuumIsConvertedOnRequest() throws {
        var options = RollupStoreOptions()
        options.makesIncrementalSQLite = false
        let fixture = try StoreFixture(.sqlite, options: options)
        _ = try Self.seed(fixture.store)
        let store = try #require(fixture.store as? any RollupStoreMaintenance)
        #expect(try store.stats().reclaimsIncrementally == false)
        var policy = RetentionPolicy()
        policy.keepMinutes = 14 * Self.day
        policy.keepHours = 30 * Self.day
        let report = try store.prune(policy, now: Self.now, shouldContinue: { true })
        #expect(report.minuteRows > 0)
        // The freed pages stay in the file (and are reused), until the file is rewritten once.
        #expect(report.reclaimedPages == nil)
        #expect((try store.stats().freeBytes ?? 0) > 0)
        #expect(try store.enableIncrementalReclaim())
        let converted = try store.stats()
        #expect(converted.reclaimsIncrementally == true)
        #expect(converted.freeBytes == 0)
        #expect(try !store.enableIncrementalReclaim())
        #expect(
            try fixture.reopen().seriesRollups(SeriesQuery(from: Self.now.minus(86_400), to: Self.now)).count == 288)
    }

    @Test func aPolicyThatKeepsHoursShorterThanMinutesIsRefused() throws {
        let fixture = try StoreFixture(.sqlite)
        let store = try #require(fixture.store as? any RollupStoreMaintenance)
        var policy = RetentionPolicy()
        policy.keepHours = policy.keepMinutes - 3600
        #expect(throws: RollupStoreError.self) { try store.prune(policy, now: Self.now, shouldContinue: { true }) }
    }
}

/// A thread-safe count for the prune's continue callback.
final class Counter: Sendable {
    private let value = Mutex(0)

    /// Adds one and returns the new count.
    func increment() -> Int {
        value.withLock {
            $0 += 1; return $0
        }
    }
}

extension Timestamp {
    fileprivate func minus(_ seconds: Int64) -> Timestamp { Timestamp(secondsSinceEpoch: secondsSinceEpoch - seconds) }
}
