import FlowmeterModels
import Foundation
import RollupStore
import Rollups
import Synchronization
import TestSupport
import Testing

/// One suite for every store: each behaviour runs against the in-memory reference, SQLite and PostgreSQL.
@Suite struct RollupStoreTests {
    /// Applies the same partials to `fixture`'s store and to a fresh reference store.
    private func applyToBoth(_ partials: [PartialRollup], _ store: any RollupStore, _ reference: InMemoryRollupStore)
        throws
    {
        let result = try store.apply(partials)
        let expected = try reference.apply(partials)
        #expect(result == expected)
    }

    @Test(arguments: StoreKind.allCases)
    func applyThenReadBack(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        var factory = RollupFactory()
        let shop = RollupFactory.series()
        let debug = RollupFactory.series(configuration: .debug, widget: "")
        let rollups = [
            RollupFactory.seriesRollup(shop, minute: 0, events: 3),
            RollupFactory.seriesRollup(shop, minute: 1, events: 4, installs: ["a", "b", "c"]),
            RollupFactory.seriesRollup(debug, minute: 1, events: 1),
        ]
        let result = try fixture.store.apply(factory.partials(rollups.map { .series($0) }))
        #expect(result == RollupApplyResult(applied: 3, duplicates: 0))

        let all = try fixture.store.seriesRollups(
            SeriesQuery(from: RollupFactory.at(minute: 0), to: RollupFactory.at(minute: 60)))
        #expect(all == [rollups[0], rollups[2], rollups[1]].sorted { ($0.window, $0.series) < ($1.window, $1.series) })
        #expect(
            all.first { $0.window.start == RollupFactory.at(minute: 1).secondsSinceEpoch && $0.series == shop }?
                .installs.count == 3)

        let releaseOnly = try fixture.store.seriesRollups(
            SeriesQuery(
                from: RollupFactory.at(minute: 1), to: RollupFactory.at(minute: 2), buildConfiguration: .release))
        #expect(releaseOnly == [rollups[1]])
        let byWidget = try fixture.store.seriesRollups(
            SeriesQuery(from: RollupFactory.at(minute: 0), to: RollupFactory.at(minute: 60), widgetTypes: [""]))
        #expect(byWidget == [rollups[2]])
        let none = try fixture.store.seriesRollups(
            SeriesQuery(from: RollupFactory.at(minute: 0), to: RollupFactory.at(minute: 60), kinds: [.malformedPayload])
        )
        #expect(none.isEmpty)
    }

    @Test(arguments: StoreKind.allCases)
    func partialsFromSeveralCollectorsMerge(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        let reference = InMemoryRollupStore()
        var collectorA = RollupFactory(collector: "collector-a")
        var collectorB = RollupFactory(collector: "collector-b")
        let shop = RollupFactory.series()
        let fromA = RollupFactory.seriesRollup(
            shop, minute: 2, events: 5, installs: ["a", "b"], second: 30, release: "api@1")
        let fromB = RollupFactory.seriesRollup(
            shop, minute: 2, events: 7, installs: ["b", "c"], second: 2, release: "api@2", path: "Index 9.body")
        try applyToBoth(collectorA.partials([.series(fromA)]), fixture.store, reference)
        try applyToBoth(collectorB.partials([.series(fromB)]), fixture.store, reference)

        let query = SeriesQuery(from: RollupFactory.at(minute: 0), to: RollupFactory.at(minute: 10))
        let merged = try fixture.store.seriesRollups(query)
        #expect(merged == (try reference.seriesRollups(query)))
        let rollup = try #require(merged.first)
        #expect(rollup.events == 12)
        #expect(rollup.installs.count == 3)
        #expect(rollup.releases == ["api@1": 5, "api@2": 7])
        #expect(rollup.firstSeen == fromB.firstSeen)
        #expect(rollup.lastSeen == fromA.lastSeen)
        #expect(rollup.samples.count == 2)
    }

    @Test(arguments: StoreKind.allCases)
    func replayedIDsCountOnce(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        var factory = RollupFactory()
        let shop = RollupFactory.series()
        let partials = factory.partials([
            .series(RollupFactory.seriesRollup(shop, minute: 0, events: 3)),
            .version(
                RollupFactory.versionRollup(RollupFactory.versionKey(), minute: 0, batches: 2, decodes: 9, types: ["a"])
            ),
        ])
        #expect(try fixture.store.apply(partials) == RollupApplyResult(applied: 2, duplicates: 0))
        #expect(try fixture.store.apply(partials) == RollupApplyResult(applied: 0, duplicates: 2))
        // The same id twice within one list counts once too.
        let doubled = factory.partials([.series(RollupFactory.seriesRollup(shop, minute: 0, events: 10))])
        #expect(try fixture.store.apply(doubled + doubled) == RollupApplyResult(applied: 1, duplicates: 1))

        let range = (from: RollupFactory.at(minute: 0), to: RollupFactory.at(minute: 1))
        let series = try fixture.store.seriesRollups(SeriesQuery(from: range.from, to: range.to))
        #expect(series.map(\.events) == [13])
        let versions = try fixture.store.versionRollups(from: range.from, to: range.to, appID: nil)
        #expect(versions.map(\.batches) == [2])
        let hourly = try fixture.store.seriesBuckets(SeriesQuery(from: range.from, to: range.to), bucketSeconds: 3600)
        #expect(hourly.map(\.events) == [13])
    }

    @Test(arguments: StoreKind.allCases)
    func bucketsMatchTheReferenceOnMinutesAndHours(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        let reference = InMemoryRollupStore()
        var factory = RollupFactory()
        let seriesList = [
            RollupFactory.series(), RollupFactory.series(widget: "carousel"),
            RollupFactory.series(app: "com.example.news", kind: .malformedPayload, widget: ""),
        ]
        var rollups: [PartialRollup.Rollup] = []
        var generator = SeededGenerator(seed: 42)
        // Five hours and a bit, with gaps, so ragged edges and empty buckets both occur.
        for minute in Int64(0)..<320 where generator.next() % 3 != 0 {
            let series = seriesList[Int(generator.next() % 3)]
            rollups.append(
                .series(RollupFactory.seriesRollup(series, minute: minute, events: Int64(generator.next() % 50 + 1))))
            rollups.append(
                .version(
                    RollupFactory.versionRollup(
                        RollupFactory.versionKey(version: "1.\(minute % 2)"), minute: minute,
                        batches: Int64(generator.next() % 9 + 1), decodes: Int64(generator.next() % 99),
                        types: ["t\(minute % 4)"])))
        }
        for chunk in stride(from: 0, to: rollups.count, by: 40) {
            try applyToBoth(
                factory.partials(Array(rollups[chunk..<min(chunk + 40, rollups.count)])), fixture.store, reference)
        }
        let ranges: [(Timestamp, Timestamp)] = [
            (RollupFactory.at(minute: 0), RollupFactory.at(minute: 320)),
            (RollupFactory.at(minute: 17), RollupFactory.at(minute: 301)),
            (Timestamp(secondsSinceEpoch: RollupFactory.base + 61, nanoseconds: 5), RollupFactory.at(minute: 200)),
            (RollupFactory.at(minute: 30), RollupFactory.at(minute: 50)),
        ]
        for (from, to) in ranges {
            for bucket: Int64 in [60, 300, 3600, 7200, 86_400] {
                for query in [
                    SeriesQuery(from: from, to: to), SeriesQuery(from: from, to: to, appID: "com.example.shop"),
                    SeriesQuery(from: from, to: to, kinds: [.malformedPayload]),
                ] {
                    let buckets = try fixture.store.seriesBuckets(query, bucketSeconds: bucket)
                    #expect(buckets == (try reference.seriesBuckets(query, bucketSeconds: bucket)), "bucket \(bucket)")
                    // Whatever table they come from, buckets sum to the minutes they cover.
                    #expect(
                        buckets.reduce(0) { $0 + $1.events }
                            == (try fixture.store.seriesRollups(query)).reduce(0) { $0 + $1.events })
                }
                let versions = try fixture.store.versionBuckets(from: from, to: to, appID: nil, bucketSeconds: bucket)
                #expect(
                    versions == (try reference.versionBuckets(from: from, to: to, appID: nil, bucketSeconds: bucket)))
            }
            let query = SeriesQuery(from: from, to: to)
            #expect(try fixture.store.seriesRollups(query) == (try reference.seriesRollups(query)))
            #expect(
                try fixture.store.versionRollups(from: from, to: to, appID: "com.example.shop")
                    == (try reference.versionRollups(from: from, to: to, appID: "com.example.shop")))
        }
    }

    @Test(arguments: StoreKind.allCases)
    func versionRollupsUnionRegisteredTypes(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        var collectorA = RollupFactory(collector: "collector-a")
        var collectorB = RollupFactory(collector: "collector-b")
        let key = RollupFactory.versionKey()
        _ = try fixture.store.apply(
            collectorA.partials([
                .version(
                    RollupFactory.versionRollup(
                        key, minute: 4, batches: 3, decodes: 10, types: ["hero", "grid"], schema: 2))
            ]))
        _ = try fixture.store.apply(
            collectorB.partials([
                .version(
                    RollupFactory.versionRollup(
                        key, minute: 4, batches: 5, decodes: 1, types: ["grid", "carousel"], schema: nil))
            ]))
        let rollups = try fixture.store.versionRollups(
            from: RollupFactory.at(minute: 0), to: RollupFactory.at(minute: 10), appID: key.appID)
        let rollup = try #require(rollups.first)
        #expect(rollups.count == 1)
        #expect(rollup.batches == 8)
        #expect(rollup.decodes == 11)
        #expect(rollup.registeredTypes == ["hero", "grid", "carousel"])
        #expect(rollup.maxSchemaVersion == 2)
        #expect(
            try fixture.store.versionRollups(
                from: RollupFactory.at(minute: 0), to: RollupFactory.at(minute: 10), appID: "other"
            ).isEmpty)
    }

    @Test(arguments: StoreKind.allCases)
    func firstSeenIsTheEarliestAcrossVersionsAndApplies(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        var factory = RollupFactory()
        let older = RollupFactory.series(version: "1.0")
        let newer = RollupFactory.series(version: "2.0")
        let debugOnly = RollupFactory.series(configuration: .debug, widget: "prototype")
        _ = try fixture.store.apply(
            factory.partials([
                .series(RollupFactory.seriesRollup(newer, minute: 50, events: 1)),
                .series(RollupFactory.seriesRollup(debugOnly, minute: 1, events: 1)),
            ]))
        _ = try fixture.store.apply(
            factory.partials([.series(RollupFactory.seriesRollup(older, minute: 20, events: 1))]))
        _ = try fixture.store.apply(
            factory.partials([.series(RollupFactory.seriesRollup(newer, minute: 70, events: 1))]))

        let seen = try fixture.store.firstSeen(appID: nil, kind: .unknownType, buildConfiguration: .release)
        #expect(
            seen == [
                TypeFirstSeen(
                    appID: older.appID, widgetType: "hologram", kind: .unknownType,
                    firstSeen: RollupFactory.seriesRollup(older, minute: 20, events: 1).firstSeen)
            ])
        let debug = try fixture.store.firstSeen(appID: older.appID, kind: .unknownType, buildConfiguration: .debug)
        #expect(debug.map(\.widgetType) == ["prototype"])
        #expect(try fixture.store.firstSeen(appID: "other", kind: .unknownType, buildConfiguration: .release).isEmpty)
    }

    @Test(arguments: StoreKind.allCases)
    func deploysRoundTripAndRangeQuery(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        let first = DeployMarker(
            id: "d1", service: "page-api", version: "2026.1", environment: "production",
            startedAt: Timestamp(secondsSinceEpoch: 1000),
            finishedAt: Timestamp(secondsSinceEpoch: 1100, nanoseconds: 5),
            commit: "abc", url: "https://ci.example/1")
        let second = DeployMarker(
            id: "d2", service: "page-api", version: "2026.2", finishedAt: Timestamp(secondsSinceEpoch: 2000))
        try fixture.store.recordDeploy(second)
        try fixture.store.recordDeploy(first)
        #expect(
            try fixture.store.deploys(from: Timestamp(secondsSinceEpoch: 0), to: Timestamp(secondsSinceEpoch: 3000))
                == [first, second])
        #expect(
            try fixture.store.deploys(
                from: Timestamp(secondsSinceEpoch: 1100, nanoseconds: 6), to: Timestamp(secondsSinceEpoch: 2000)
            ).isEmpty)
        var replaced = second
        replaced.version = "2026.2-hotfix"
        try fixture.store.recordDeploy(replaced)
        #expect(
            try fixture.store.deploys(from: Timestamp(secondsSinceEpoch: 1500), to: Timestamp(secondsSinceEpoch: 2001))
                == [replaced])
    }

    @Test(arguments: StoreKind.allCases)
    func alertStateSurvivesReopening(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        let spike = AlertState(
            fingerprint: "spike|shop|hologram", kind: .spike, labels: ["appID": "shop"],
            openedAt: Timestamp(secondsSinceEpoch: 100), lastValue: .infinity, payload: "{\"ratio\":12.5}")
        let ungated = AlertState(
            fingerprint: "ungated|shop|hologram", kind: .ungatedType, labels: [:],
            openedAt: Timestamp(secondsSinceEpoch: 50), lastValue: 0.1 + 0.2, payload: "{}")
        try fixture.store.saveAlertState([ungated, spike])
        #expect(try fixture.store.openAlerts() == [spike, ungated])
        var resolved = spike
        resolved.resolvedAt = Timestamp(secondsSinceEpoch: 400)
        try fixture.store.saveAlertState([resolved])
        #expect(try fixture.store.openAlerts() == [ungated])
        if kind.isSQL {
            #expect(try fixture.reopen().openAlerts() == [ungated])
        }
    }

    @Test(arguments: [StoreKind.sqlite, .postgres])
    func clientDiscardedEventsAddUpPerVersionAndWindow(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        var factory = RollupFactory()
        let key = VersionKey(
            appID: "com.example.shop", platform: "ios", appVersion: "5.2.1", buildConfiguration: .release)
        var first = RollupFactory.versionRollup(key, minute: 0, batches: 2, decodes: 10, types: [])
        first.clientDiscarded = 3
        var second = RollupFactory.versionRollup(key, minute: 0, batches: 1, decodes: 5, types: [])
        second.clientDiscarded = 4
        var later = RollupFactory.versionRollup(key, minute: 1, batches: 1, decodes: 5, types: [])
        later.clientDiscarded = 0
        _ = try fixture.store.apply(factory.partials([.version(first), .version(later)]))
        _ = try fixture.store.apply(factory.partials([.version(second)]))
        let versions = try fixture.store.versionRollups(
            from: RollupFactory.at(minute: 0), to: RollupFactory.at(minute: 2), appID: nil)
        #expect(versions.map(\.clientDiscarded) == [7, 0])
        #expect(versions.map(\.batches) == [3, 1])
    }

    @Test(arguments: [StoreKind.sqlite, .postgres])
    func releaseTrafficAddsUpPerVersionAndWindow(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        var factory = RollupFactory()
        let key = VersionKey(
            appID: "com.example.shop", platform: "ios", appVersion: "5.2.1", buildConfiguration: .release)
        var first = RollupFactory.versionRollup(key, minute: 0, batches: 3, decodes: 30, types: [])
        first.releases = ["page-api@1": VersionReleaseTraffic(batches: 2, decodes: 20)]
        var second = RollupFactory.versionRollup(key, minute: 0, batches: 2, decodes: 7, types: [])
        second.releases = [
            "page-api@1": VersionReleaseTraffic(batches: 1, decodes: 3),
            "page-api@2": VersionReleaseTraffic(batches: 1, decodes: 4),
        ]
        let later = RollupFactory.versionRollup(key, minute: 1, batches: 1, decodes: 5, types: [])
        _ = try fixture.store.apply(factory.partials([.version(first), .version(later)]))
        _ = try fixture.store.apply(factory.partials([.version(second)]))
        let versions = try fixture.store.versionRollups(
            from: RollupFactory.at(minute: 0), to: RollupFactory.at(minute: 2), appID: nil)
        #expect(
            versions.map(\.releases) == [
                [
                    "page-api@1": VersionReleaseTraffic(batches: 3, decodes: 23),
                    "page-api@2": VersionReleaseTraffic(batches: 1, decodes: 4),
                ],
                [:],
            ])
        if kind.isSQL {
            #expect(
                try fixture.reopen().versionRollups(
                    from: RollupFactory.at(minute: 0), to: RollupFactory.at(minute: 2), appID: nil) == versions)
        }
    }

    @Test(arguments: [StoreKind.sqlite, .postgres])
    func buildsAddUpPerVersionAndWindow(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        var factory = RollupFactory()
        let key = VersionKey(
            appID: "com.example.shop", platform: "ios", appVersion: "5.2.1", buildConfiguration: .release)
        let minute = RollupFactory.at(minute: 0).secondsSinceEpoch
        var first = RollupFactory.versionRollup(key, minute: 0, batches: 3, decodes: 30, types: [])
        first.builds = ["5210": VersionBuildTraffic(batches: 2, lastSeen: minute)]
        var second = RollupFactory.versionRollup(key, minute: 0, batches: 2, decodes: 7, types: [])
        second.builds = [
            "5210": VersionBuildTraffic(batches: 1, lastSeen: minute),
            "5211 (beta)": VersionBuildTraffic(batches: 1, lastSeen: minute),
        ]
        let later = RollupFactory.versionRollup(key, minute: 1, batches: 1, decodes: 5, types: [])
        _ = try fixture.store.apply(factory.partials([.version(first), .version(later)]))
        _ = try fixture.store.apply(factory.partials([.version(second)]))
        let versions = try fixture.store.versionRollups(
            from: RollupFactory.at(minute: 0), to: RollupFactory.at(minute: 2), appID: nil)
        #expect(
            versions.map(\.builds) == [
                [
                    "5210": VersionBuildTraffic(batches: 3, lastSeen: minute),
                    "5211 (beta)": VersionBuildTraffic(batches: 1, lastSeen: minute),
                ],
                [:],
            ])
        if kind.isSQL {
            #expect(
                try fixture.reopen().versionRollups(
                    from: RollupFactory.at(minute: 0), to: RollupFactory.at(minute: 2), appID: nil) == versions)
        }
    }

    @Test(arguments: [StoreKind.sqlite, .postgres])
    func migrationsRunTwiceSafely(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        var factory = RollupFactory()
        _ = try fixture.store.apply(
            factory.partials([.series(RollupFactory.seriesRollup(RollupFactory.series(), minute: 0, events: 2))]))
        let reopened = try fixture.reopen()
        let sql = try #require(reopened as? any SchemaMigrating)
        try sql.migrate()
        try sql.migrate()
        #expect(try sql.schemaVersion() == 7)
        let rollups = try reopened.seriesRollups(
            SeriesQuery(from: RollupFactory.at(minute: 0), to: RollupFactory.at(minute: 1)))
        #expect(rollups.map(\.events) == [2])
    }

    @Test(arguments: [StoreKind.sqlite, .postgres])
    func appliedIDsArePrunedAfterTheRetention(kind: StoreKind) throws {
        var options = RollupStoreOptions()
        let clock = ManualClock(seconds: RollupFactory.base)
        options.clock = { clock.now() }
        let fixture = try StoreFixture(kind, options: options)
        var factory = RollupFactory()
        let old = factory.partials([.series(RollupFactory.seriesRollup(RollupFactory.series(), minute: 0, events: 1))])
        _ = try fixture.store.apply(old)
        clock.advance(6 * 86_400)
        let recent = factory.partials([
            .series(RollupFactory.seriesRollup(RollupFactory.series(), minute: 1, events: 1))
        ])
        _ = try fixture.store.apply(recent)
        #expect(try fixture.store.apply(old).duplicates == 1)
        clock.advance(2 * 86_400)
        // This apply prunes ids older than 7 days: `old` (8 days) goes, `recent` (2 days) stays.
        _ = try fixture.store.apply(
            factory.partials([.series(RollupFactory.seriesRollup(RollupFactory.series(), minute: 2, events: 1))]))
        #expect(try fixture.store.apply(recent).duplicates == 1)
        #expect(try fixture.store.apply(old).applied == 1)
    }

    /// A batch record can carry any count; two rollups at the top of the range used to trap in the merge and crash
    /// the sink on every restart (found by the former rollup-wire fuzz target, docs/fuzzing.md).
    @Test(arguments: StoreKind.allCases)
    func countsAtTheTopOfTheRangeSaturateInsteadOfTrapping(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        var factory = RollupFactory()
        let huge = RollupFactory.seriesRollup(RollupFactory.series(), minute: 3, events: .max)
        let version = RollupFactory.versionRollup(
            RollupFactory.versionKey(), minute: 3, batches: .max, decodes: .max, types: ["a"])
        for _ in 0..<2 {
            #expect(try fixture.store.apply(factory.partials([.series(huge), .version(version)])).applied == 2)
        }
        let window = SeriesQuery(from: RollupFactory.at(minute: 0), to: RollupFactory.at(minute: 10))
        let series = try #require(try fixture.store.seriesRollups(window).first)
        #expect(series.events == .max)
        #expect(series.releases == ["page-api@1": .max])
        let versions = try fixture.store.versionRollups(
            from: RollupFactory.at(minute: 0), to: RollupFactory.at(minute: 10), appID: nil)
        #expect(versions.map(\.batches) == [.max])
        #expect(versions.map(\.decodes) == [.max])
    }

    @Test(arguments: StoreKind.allCases)
    func readersRunWhileAWriterApplies(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        let store = fixture.store
        let series = RollupFactory.series()
        let query = SeriesQuery(from: RollupFactory.at(minute: 0), to: RollupFactory.at(minute: 10_000))
        let writes = 150
        let failures = Mutex<[String]>([])
        let readsDone = Atomic<Int>(0)
        let group = DispatchGroup()
        let writerDone = Atomic<Bool>(false)
        DispatchQueue.global().async(group: group) {
            var factory = RollupFactory()
            for index in 0..<writes {
                do {
                    _ = try store.apply(
                        factory.partials([
                            .series(RollupFactory.seriesRollup(series, minute: Int64(index % 90), events: 1)),
                            .version(
                                RollupFactory.versionRollup(
                                    RollupFactory.versionKey(), minute: Int64(index % 90), batches: 1, decodes: 1,
                                    types: ["a"])),
                        ]))
                } catch {
                    failures.withLock { $0.append("writer: \(error)") }
                }
            }
            writerDone.store(true, ordering: .releasing)
        }
        for _ in 0..<10 {
            DispatchQueue.global().async(group: group) {
                var previous: Int64 = 0
                repeat {
                    do {
                        let total = try store.seriesBuckets(query, bucketSeconds: 3600).reduce(0) { $0 + $1.events }
                        // A reader sees a committed prefix: totals only grow.
                        if total < previous {
                            failures.withLock { $0.append("total went back from \(previous) to \(total)") }
                        }
                        previous = total
                        _ = try store.versionRollups(from: query.from, to: query.to, appID: nil)
                        readsDone.add(1, ordering: .relaxed)
                    } catch {
                        failures.withLock { $0.append("reader: \(error)") }
                    }
                } while !writerDone.load(ordering: .acquiring)
            }
        }
        #expect(group.wait(timeout: .now() + 120) == .success, "readers and writer did not finish within 120 s")
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0.prefix(5) })")
        #expect(readsDone.load(ordering: .relaxed) >= 10)
        let total = try store.seriesBuckets(query, bucketSeconds: 60).reduce(0) { $0 + $1.events }
        #expect(total == Int64(writes))
    }
}

/// A clock tests move by hand.
final class ManualClock: Sendable {
    private let seconds: Mutex<Int64>

    init(seconds: Int64) {
        self.seconds = Mutex(seconds)
    }

    func now() -> Timestamp { Timestamp(secondsSinceEpoch: seconds.withLock { $0 }) }

    func advance(_ delta: Int64) { seconds.withLock { $0 += delta } }
}
