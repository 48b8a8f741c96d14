import FlowmeterModels
import Testing

@testable import Rollups

@Suite struct InMemoryRollupStoreTests {
    static let base: Int64 = 1_764_493_140

    static func series(
        _ type: String, version: String = "5.2.1", app: String = "com.example.shop",
        build: BuildConfiguration = .release, kind: DiagnosticKind = .unknownType
    ) -> RollupSeries {
        RollupSeries(
            appID: app, platform: "ios", appVersion: version, buildConfiguration: build, kind: kind, widgetType: type)
    }

    static func partial(_ id: String, _ series: RollupSeries, minute: Int64, events: Int64) -> PartialRollup {
        let start = Timestamp(secondsSinceEpoch: base + minute * 60 + 1)
        return PartialRollup(
            id: id, collector: "c",
            rollup: .series(
                SeriesRollup(
                    series: series, window: MinuteWindow(start: base + minute * 60), events: events, firstSeen: start,
                    lastSeen: start)))
    }

    static func version(_ id: String, minute: Int64, batches: Int64, app: String = "com.example.shop") -> PartialRollup
    {
        PartialRollup(
            id: id, collector: "c",
            rollup: .version(
                VersionRollup(
                    key: VersionKey(appID: app, platform: "ios", appVersion: "5.2.1", buildConfiguration: .release),
                    window: MinuteWindow(start: base + minute * 60), batches: batches, cleanBatches: 1,
                    decodes: batches * 10)))
    }

    static func at(_ minute: Int64) -> Timestamp { Timestamp(secondsSinceEpoch: base + minute * 60) }

    @Test func applyingIsIdempotentByID() throws {
        let store = InMemoryRollupStore()
        let first = [
            Self.partial("a/0/0", Self.series("t"), minute: 0, events: 3),
            Self.partial("a/0/1", Self.series("t"), minute: 0, events: 4),
        ]
        #expect(try store.apply(first) == RollupApplyResult(applied: 2, duplicates: 0))
        #expect(try store.apply(first + [first[0]]) == RollupApplyResult(applied: 0, duplicates: 3))
        let rollups = try store.seriesRollups(SeriesQuery(from: Self.at(0), to: Self.at(1)))
        #expect(rollups.map(\.events) == [7])
    }

    @Test func queriesFilterHalfOpenRangesAndOrderByWindowThenSeries() throws {
        let store = InMemoryRollupStore()
        _ = try store.apply([
            Self.partial("1", Self.series("b"), minute: 0, events: 1),
            Self.partial("2", Self.series("a"), minute: 0, events: 2),
            Self.partial("3", Self.series("a"), minute: 2, events: 3),
            Self.partial("4", Self.series("a", build: .debug), minute: 1, events: 4),
            Self.partial("5", Self.series("a", app: "com.other"), minute: 1, events: 5),
            Self.partial("6", Self.series("a", kind: .malformedPayload), minute: 1, events: 6),
        ])
        let all = try store.seriesRollups(SeriesQuery(from: Self.at(0), to: Self.at(2)))
        // Within a minute: app, platform, version, build (debug before release), kind, type.
        #expect(all.map(\.events) == [2, 1, 4, 6, 5])
        let release = try store.seriesRollups(
            SeriesQuery(
                from: Self.at(0), to: Self.at(3), appID: "com.example.shop", kinds: [.unknownType],
                buildConfiguration: .release))
        #expect(release.map(\.events) == [2, 1, 3])
        let typed = try store.seriesRollups(SeriesQuery(from: Self.at(0), to: Self.at(3), widgetTypes: ["b"]))
        #expect(typed.map(\.events) == [1])
        let buckets = try store.seriesBuckets(
            SeriesQuery(
                from: Self.at(0), to: Self.at(3), appID: "com.example.shop", kinds: [.unknownType],
                buildConfiguration: .release), bucketSeconds: 3600)
        let hour = MinuteWindow(start: Self.base).bucketStart(bucketSeconds: 3600)
        // The base minute is 09:59, so minute 2 lands in the next hour.
        #expect(
            buckets == [
                SeriesBucket(series: Self.series("a"), bucketStart: hour, events: 2),
                SeriesBucket(series: Self.series("b"), bucketStart: hour, events: 1),
                SeriesBucket(series: Self.series("a"), bucketStart: hour + 3600, events: 3),
            ])
    }

    @Test func versionReadsMergeAndBucket() throws {
        let store = InMemoryRollupStore()
        _ = try store.apply([
            Self.version("1", minute: 0, batches: 2), Self.version("2", minute: 0, batches: 3),
            Self.version("3", minute: 1, batches: 4), Self.version("4", minute: 1, batches: 4, app: "com.other"),
        ])
        let rollups = try store.versionRollups(from: Self.at(0), to: Self.at(2), appID: "com.example.shop")
        #expect(rollups.map(\.batches) == [5, 4])
        #expect(rollups.map(\.cleanBatches) == [2, 1])
        let buckets = try store.versionBuckets(from: Self.at(0), to: Self.at(2), appID: nil, bucketSeconds: 86_400)
        #expect(buckets.map(\.batches) == [9, 4])
        #expect(buckets.map(\.decodes) == [90, 40])
    }

    @Test func firstSeenIsTheEarliestPerAppAndType() throws {
        let store = InMemoryRollupStore()
        _ = try store.apply([
            Self.partial("1", Self.series("t", version: "5.2.1"), minute: 5, events: 1),
            Self.partial("2", Self.series("t", version: "5.1.0"), minute: 2, events: 1),
            Self.partial("3", Self.series("t", build: .debug), minute: 0, events: 1),
            Self.partial("4", Self.series("u", kind: .malformedPayload), minute: 0, events: 1),
        ])
        let seen = try store.firstSeen(appID: nil, kind: .unknownType, buildConfiguration: .release)
        #expect(
            seen == [
                TypeFirstSeen(
                    appID: "com.example.shop", widgetType: "t", kind: .unknownType,
                    firstSeen: Timestamp(secondsSinceEpoch: Self.base + 121))
            ])
    }

    @Test func deploysAndAlertsAreKeptByIdentity() throws {
        let store = InMemoryRollupStore()
        try store.recordDeploy(DeployMarker(id: "2", service: "api", version: "2", finishedAt: Self.at(3)))
        try store.recordDeploy(DeployMarker(id: "1", service: "api", version: "1", finishedAt: Self.at(1)))
        try store.recordDeploy(DeployMarker(id: "1", service: "api", version: "1b", finishedAt: Self.at(1)))
        #expect(try store.deploys(from: Self.at(0), to: Self.at(3)).map(\.version) == ["1b"])
        #expect(try store.deploys(from: Self.at(0), to: Self.at(4)).map(\.id) == ["1", "2"])

        let open = AlertState(
            fingerprint: "f2", kind: .spike, labels: ["appID": "a"], openedAt: Self.at(0), lastValue: 4, payload: "{}")
        var other = open
        other.fingerprint = "f1"
        try store.saveAlertState([open, other])
        #expect(try store.openAlerts().map(\.fingerprint) == ["f1", "f2"])
        other.resolvedAt = Self.at(5)
        try store.saveAlertState([other])
        #expect(try store.openAlerts() == [open])
    }
}
