import FlowmeterModels
import Foundation
import Kafka
import RollupStore
import Rollups
import Sink
import Synchronization
import TestSupport
import Testing

@Suite struct RollupSinkTests {
    @Test(arguments: SinkStoreKind.allCases)
    func appliesEveryPartialRollupSoTheStoreSumsToTheRecordedEvents(_ kind: SinkStoreKind) async throws {
        let fixture = try SinkFixture(store: kind)
        let (events, messages) = try await fixture.publishTraffic(batches: 60, installs: 40)
        let sink = try fixture.makeSink(group: "sink-\(UUID().uuidString)")
        defer { sink.stop() }
        #expect(try await drive(sink) { $0.applied >= messages })
        let totals = try fixture.totals()
        #expect(totals.events == events)
        #expect(totals.batches == 60)
        #expect(abs(totals.installs - 40) <= 2)
        #expect(sink.counters.applied == messages)
        #expect(sink.counters.badMessages == 0)
        #expect(sink.counters.commits > 0)
    }

    @Test func replayingTheTopicWithANewGroupDoesNotDoubleCount() async throws {
        let fixture = try SinkFixture()
        let (events, messages) = try await fixture.publishTraffic(batches: 30, installs: 10)
        let first = try fixture.makeSink(group: "first-\(UUID().uuidString)")
        #expect(try await drive(first) { $0.applied >= messages })
        try await onThread { first.stop() }
        let replay = try fixture.makeSink(group: "replay-\(UUID().uuidString)")
        defer { replay.stop() }
        #expect(try await drive(replay) { $0.duplicates >= messages })
        #expect(replay.counters.applied == 0)
        #expect(try fixture.totals().events == events)
    }

    @Test(arguments: SinkStoreKind.allCases)
    func killedBetweenStoreCommitAndOffsetCommitRestartedDoesNotDoubleCount(_ kind: SinkStoreKind) async throws {
        let fixture = try SinkFixture(store: kind)
        let (events, messages) = try await fixture.publishTraffic(batches: 30, installs: 10)
        let group = "crash-\(UUID().uuidString)"
        // The first sink gets everything into the store but dies before committing a single offset.
        let crashed = try fixture.makeSink(group: group)
        #expect(try await drive(crashed, commit: false) { $0.applied >= messages })
        #expect(crashed.counters.commits == 0)
        try await onThread { crashed.stop() }
        #expect(try fixture.totals().events == events)

        // Its successor in the same group is handed the uncommitted messages again and skips every one.
        let restarted = try fixture.makeSink(group: group)
        defer { restarted.stop() }
        #expect(try await drive(restarted) { $0.duplicates >= messages })
        #expect(restarted.counters.applied == 0)
        #expect(try fixture.totals().events == events)
        #expect(try fixture.totals().batches == 30)
    }

    @Test func badMessagesAreCountedAndSkippedAndTheGoodOnesApplied() async throws {
        let fixture = try SinkFixture(partitions: 1)
        let window = MinuteWindow(start: Int64(Date().timeIntervalSince1970) / 60 * 60)
        var installs = HyperLogLog()
        installs.insert(installHash: SinkFixture.installHash(1))
        let rollup = SeriesRollup(
            series: RollupSeries(
                appID: "com.example.shop", platform: "ios", appVersion: "5.2.1", buildConfiguration: .release,
                kind: .unknownType, widgetType: "hologram"),
            window: window, events: 7, installs: installs,
            firstSeen: Timestamp(secondsSinceEpoch: window.start), lastSeen: Timestamp(secondsSinceEpoch: window.start))
        let good = PartialRollup(id: "c-1/0/0", collector: "c", rollup: .series(rollup))
        // A rollup written by something other than a collector, whose kind and app id break the identifier rule.
        let hostile = String(decoding: good.jsonBytes(), as: UTF8.self)
            .replacingOccurrences(of: "\"unknownType\"", with: #""\u0000""#)
        let hostileApp = String(decoding: good.jsonBytes(), as: UTF8.self)
            .replacingOccurrences(of: "com.example.shop", with: #"com.\u001b[2Jshop"#)
        #expect(hostile.contains(#"\u0000"#) && hostileApp.contains(#"\u001b"#))
        let values: [[UInt8]] = [
            Array("not json".utf8), good.jsonBytes(), Array(#"{"id":"x","collector":"c","type":"series"}"#.utf8),
            [0xFF, 0xFE], good.jsonBytes(), Array(hostile.utf8), Array(hostileApp.utf8),
        ]
        let producer = try fixture.kafka.makeProducer()
        for value in values {
            _ = try await producer.send(KafkaProducerMessage(topic: KafkaFixture.rollupsTopic, key: [1], value: value))
        }
        _ = try await producer.send(
            KafkaProducerMessage(topic: KafkaFixture.deploysTopic, key: Array("page-api".utf8), value: Array("{}".utf8))
        )
        _ = await producer.shutdown(timeout: .seconds(5))

        let sink = try fixture.makeSink(group: "bad-\(UUID().uuidString)")
        defer { sink.stop() }
        #expect(try await drive(sink) { $0.applied + $0.duplicates + $0.badMessages >= 8 })
        #expect(sink.counters.badMessages == 6)
        #expect(sink.counters.applied == 1)
        #expect(sink.counters.duplicates == 1)
        let from = Timestamp(secondsSinceEpoch: window.start - 60), to = Timestamp(secondsSinceEpoch: window.start + 60)
        #expect(try fixture.store.seriesRollups(SeriesQuery(from: from, to: to)).map(\.events) == [7])

        // Every skipped message is in the dead-letter file with where it came from and its bytes.
        let letters = try fixture.deadLetters()
        #expect(sink.counters.deadLetters == 6 && letters.count == 6)
        #expect(
            Set(letters.compactMap { $0["topic"] as? String }) == [
                KafkaFixture.rollupsTopic, KafkaFixture.deploysTopic,
            ])
        #expect(letters.allSatisfy { $0["partition"] is Int && $0["offset"] is Int && $0["reason"] is String })
        let saved = letters.compactMap { ($0["value"] as? String).flatMap { Data(base64Encoded: $0) } }
        #expect(
            Set(saved.map { [UInt8]($0) })
                == Set([values[0], values[2], values[3], values[5], values[6], Array("{}".utf8)]))
    }

    @Test func aMessageTheStoreRefusesForGoodIsDeadLetteredAndTheRestApplied() async throws {
        let fixture = try SinkFixture(partitions: 1)
        let (events, messages) = try await fixture.publishTraffic(batches: 10, installs: 5, flushes: 1)
        let refusing = RefusingStore(wrapping: fixture.store)
        let sink = try fixture.makeSink(group: "refused-\(UUID().uuidString)", store: refusing)
        defer { sink.stop() }
        #expect(try await drive(sink) { $0.applied + $0.refusedMessages >= messages })
        #expect(sink.counters.refusedMessages == 1)
        #expect(sink.counters.applied == messages - 1)
        #expect(try fixture.deadLetters().count == 1)
        let refused = try #require(refusing.refused.withLock { $0 })
        #expect(try fixture.totals().events == events - refused)
        // The partition moved on: offsets were committed past the refused message.
        #expect(sink.counters.commits >= 1)
    }

    @Test func deployMarkersFromTheDeploysTopicLandInTheStore() async throws {
        let fixture = try SinkFixture()
        let finished = Timestamp(secondsSinceEpoch: Int64(Date().timeIntervalSince1970) - 120)
        let marker = DeployMarker(service: "page-api", version: "2026.11.30-2", finishedAt: finished, commit: "9f2c1ab")
        let producer = try fixture.kafka.makeProducer()
        // Twice, as a retried publish would: the marker's id makes the second a replacement, not a second deploy.
        for _ in 0..<2 {
            _ = try await producer.send(
                KafkaProducerMessage(
                    topic: KafkaFixture.deploysTopic, key: Array(marker.service.utf8), value: marker.jsonBytes()))
        }
        _ = await producer.shutdown(timeout: .seconds(5))
        let sink = try fixture.makeSink(group: "deploys-\(UUID().uuidString)")
        defer { sink.stop() }
        #expect(try await drive(sink) { $0.deploys >= 2 })
        let stored = try fixture.store.deploys(
            from: Timestamp(secondsSinceEpoch: finished.secondsSinceEpoch - 60),
            to: Timestamp(secondsSinceEpoch: finished.secondsSinceEpoch + 60))
        #expect(stored == [marker])
    }

    @Test func aStoreFailureRetriesTheSameBatchAndCommitsOnlyAfterItsApplied() async throws {
        let fixture = try SinkFixture()
        let (events, messages) = try await fixture.publishTraffic(batches: 10, installs: 5, flushes: 1)
        let flaky = FlakyStore(wrapping: fixture.store, failures: 3)
        let sink = try fixture.makeSink(group: "flaky-\(UUID().uuidString)", store: flaky)
        defer { sink.stop() }
        #expect(try await drive(sink) { $0.applied >= messages })
        #expect(sink.counters.errors >= 3)
        #expect(try fixture.totals().events == events)
    }

    @Test func runsOnItsOwnThreadUntilStopped() async throws {
        let fixture = try SinkFixture()
        let (events, messages) = try await fixture.publishTraffic(batches: 10, installs: 3)
        let sink = try fixture.makeSink(group: "run-\(UUID().uuidString)")
        sink.start()
        _ = await eventually(every: .milliseconds(50)) { sink.counters.applied >= messages }
        try await onThread { sink.stop() }
        #expect(sink.counters.applied == messages)
        #expect(try fixture.totals().events == events)
    }
}

/// A store that refuses, for good (not retriable), every apply that holds the first series partial it sees; it keeps
/// that partial's events.
final class RefusingStore: RollupStore {
    private let store: any RollupStore
    let refused = Mutex<Int64?>(nil)
    private let victim = Mutex<String?>(nil)

    init(wrapping store: any RollupStore) {
        self.store = store
    }

    func apply(_ partials: [PartialRollup]) throws -> RollupApplyResult {
        let victim = self.victim.withLock { victim in
            if victim == nil, let first = partials.first(where: { if case .series = $0.rollup { true } else { false } })
            {
                victim = first.id
                if case .series(let rollup) = first.rollup { refused.withLock { $0 = rollup.events } }
            }
            return victim
        }
        if partials.contains(where: { $0.id == victim }) {
            throw RollupStoreError(.queryFailed, "injected by a test: refused for good")
        }
        return try store.apply(partials)
    }

    func recordDeploy(_ deploy: DeployMarker) throws { try store.recordDeploy(deploy) }
    func recordManifest(_ manifest: CapabilityManifest) throws { try store.recordManifest(manifest) }
    func manifests(appID: String?) throws -> [CapabilityManifest] { try store.manifests(appID: appID) }
    func seriesRollups(_ query: SeriesQuery) throws -> [SeriesRollup] { try store.seriesRollups(query) }
    func seriesBuckets(_ query: SeriesQuery, bucketSeconds: Int64) throws -> [SeriesBucket] {
        try store.seriesBuckets(query, bucketSeconds: bucketSeconds)
    }
    func versionRollups(from: Timestamp, to: Timestamp, appID: String?) throws -> [VersionRollup] {
        try store.versionRollups(from: from, to: to, appID: appID)
    }
    func versionBuckets(from: Timestamp, to: Timestamp, appID: String?, bucketSeconds: Int64) throws
        -> [VersionBucket]
    {
        try store.versionBuckets(from: from, to: to, appID: appID, bucketSeconds: bucketSeconds)
    }
    func firstSeen(appID: String?, kind: DiagnosticKind, buildConfiguration: BuildConfiguration) throws
        -> [TypeFirstSeen]
    {
        try store.firstSeen(appID: appID, kind: kind, buildConfiguration: buildConfiguration)
    }
    func deploys(from: Timestamp, to: Timestamp) throws -> [DeployMarker] { try store.deploys(from: from, to: to) }
    func saveAlertState(_ alerts: [AlertState]) throws { try store.saveAlertState(alerts) }
    func openAlerts() throws -> [AlertState] { try store.openAlerts() }
    func recordWatermarks(_ watermarks: [CollectorWatermark]) throws { try store.recordWatermarks(watermarks) }
    func freshness() throws -> StoreFreshness { try store.freshness() }
}

/// A store whose first `failures` applies throw a retriable error.
final class FlakyStore: RollupStore {
    private let store: any RollupStore
    private let remaining: Mutex<Int>

    init(wrapping store: any RollupStore, failures: Int) {
        self.store = store
        self.remaining = Mutex(failures)
    }

    func apply(_ partials: [PartialRollup]) throws -> RollupApplyResult {
        let fails = remaining.withLock { count in
            defer { count = max(0, count - 1) }
            return count > 0
        }
        if fails { throw RollupStoreError(.busy, "injected by a test", isRetriable: true) }
        return try store.apply(partials)
    }

    func recordDeploy(_ deploy: DeployMarker) throws { try store.recordDeploy(deploy) }
    func recordManifest(_ manifest: CapabilityManifest) throws { try store.recordManifest(manifest) }
    func manifests(appID: String?) throws -> [CapabilityManifest] { try store.manifests(appID: appID) }
    func seriesRollups(_ query: SeriesQuery) throws -> [SeriesRollup] { try store.seriesRollups(query) }
    func seriesBuckets(_ query: SeriesQuery, bucketSeconds: Int64) throws -> [SeriesBucket] {
        try store.seriesBuckets(query, bucketSeconds: bucketSeconds)
    }
    func versionRollups(from: Timestamp, to: Timestamp, appID: String?) throws -> [VersionRollup] {
        try store.versionRollups(from: from, to: to, appID: appID)
    }
    func versionBuckets(from: Timestamp, to: Timestamp, appID: String?, bucketSeconds: Int64) throws
        -> [VersionBucket]
    {
        try store.versionBuckets(from: from, to: to, appID: appID, bucketSeconds: bucketSeconds)
    }
    func firstSeen(appID: String?, kind: DiagnosticKind, buildConfiguration: BuildConfiguration) throws
        -> [TypeFirstSeen]
    {
        try store.firstSeen(appID: appID, kind: kind, buildConfiguration: buildConfiguration)
    }
    func deploys(from: Timestamp, to: Timestamp) throws -> [DeployMarker] { try store.deploys(from: from, to: to) }
    func saveAlertState(_ alerts: [AlertState]) throws { try store.saveAlertState(alerts) }
    func openAlerts() throws -> [AlertState] { try store.openAlerts() }
    func recordWatermarks(_ watermarks: [CollectorWatermark]) throws { try store.recordWatermarks(watermarks) }
    func freshness() throws -> StoreFreshness { try store.freshness() }
}
