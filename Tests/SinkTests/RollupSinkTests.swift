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
    func countsEveryBatchRecordSoTheStoreSumsToThePublishedEvents(_ kind: SinkStoreKind) async throws {
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
        // A new group starts at the topic's beginning; the sink moves every partition to the store's offset.
        let partitions = try fixture.partitionsWithData()
        let replay = try fixture.makeSink(group: "replay-\(UUID().uuidString)")
        defer { replay.stop() }
        #expect(try await drive(replay) { $0.seeks >= partitions })
        #expect(replay.counters.applied == 0)
        #expect(try fixture.totals().events == events)
    }

    @Test(arguments: SinkStoreKind.allCases)
    func killedBetweenStoreCommitAndOffsetCommitRestartedDoesNotDoubleCount(_ kind: SinkStoreKind) async throws {
        let fixture = try SinkFixture(store: kind)
        let (events, messages) = try await fixture.publishTraffic(batches: 30, installs: 10)
        let group = "crash-\(UUID().uuidString)"
        // The first sink gets everything into the store but dies before committing a single Kafka offset.
        let crashed = try fixture.makeSink(group: group)
        #expect(try await drive(crashed, commit: false) { $0.applied >= messages })
        #expect(crashed.counters.commits == 0)
        try await onThread { crashed.stop() }
        #expect(try fixture.totals().events == events)

        // Its successor in the same group is handed the records from the start again and reads from the store's
        // offsets instead.
        let partitions = try fixture.partitionsWithData()
        let restarted = try fixture.makeSink(group: group)
        defer { restarted.stop() }
        #expect(try await drive(restarted) { $0.seeks >= partitions })
        #expect(restarted.counters.applied == 0)
        #expect(try fixture.totals().events == events)
        #expect(try fixture.totals().batches == 30)
    }

    @Test(arguments: SinkStoreKind.allCases)
    func aBatchRetriedThroughAnotherCollectorIsCountedOnce(_ kind: SinkStoreKind) async throws {
        let fixture = try SinkFixture(store: kind)
        let now = Int64(Date().timeIntervalSince1970)
        let events = SinkFixture.events(index: 0, now: now)
        let producer = try fixture.kafka.makeProducer()
        // The first copy through collector A; the retry through collector B 20 minutes later (receipt time and
        // collector differ, the id does not); a different batch in between.
        let copies = [
            ("retried", "collector-a", now), ("other", "collector-a", now + 1), ("retried", "collector-b", now + 1200),
        ]
        for (id, collector, receivedAt) in copies {
            for message in SinkFixture.messages(
                batchID: id, client: SinkFixture.client(index: 0), events: events, installHash: "h",
                receivedAt: Timestamp(secondsSinceEpoch: receivedAt), collector: collector)
            {
                _ = try await producer.send(message)
            }
        }
        _ = await producer.shutdown(timeout: .seconds(5))
        let sink = try fixture.makeSink(group: "retry-\(UUID().uuidString)")
        defer { sink.stop() }
        #expect(try await drive(sink) { $0.applied + $0.duplicates >= 3 })
        #expect(sink.counters.applied == 2)
        #expect(sink.counters.duplicates == 1)
        let totals = try fixture.totals()
        #expect(totals.batches == 2)
        #expect(totals.events == 2 * events.reduce(0) { $0 + Int64($1.count) })
    }

    @Test func recordsThatAreNotBatchRecordsAreDeadLetteredAndTheGoodOnesCounted() async throws {
        let fixture = try SinkFixture(partitions: 1)
        let now = Int64(Date().timeIntervalSince1970)
        let events = [
            DiagnosticEvent(
                kind: .unknownType, widgetType: "hologram", count: 7, occurredAt: Timestamp(secondsSinceEpoch: now))
        ]
        let good = SinkFixture.records(
            batchID: "b1", client: SinkFixture.client(index: 0), events: events, installHash: "h",
            receivedAt: Timestamp(secondsSinceEpoch: now)
        ).values[0]
        // Records written by something other than a collector, whose kind and app id break the identifier rule.
        let hostile = String(decoding: good, as: UTF8.self)
            .replacingOccurrences(of: "\"unknownType\"", with: #""\u0000""#)
        let hostileApp = String(decoding: good, as: UTF8.self)
            .replacingOccurrences(of: "com.example.shop", with: #"com.\u001b[2Jshop"#)
        #expect(hostile.contains(#"\u0000"#) && hostileApp.contains(#"\u001b"#))
        let values: [[UInt8]] = [
            Array("not json".utf8), good, Array(#"{"batchID":"x","appID":"a"}"#.utf8), [0xFF, 0xFE], good,
            Array(hostile.utf8), Array(hostileApp.utf8),
        ]
        let producer = try fixture.kafka.makeProducer()
        for value in values {
            _ = try await producer.send(KafkaProducerMessage(topic: KafkaFixture.batchesTopic, key: [1], value: value))
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
        let from = Timestamp(secondsSinceEpoch: now - 120), to = Timestamp(secondsSinceEpoch: now + 120)
        #expect(try fixture.store.seriesRollups(SeriesQuery(from: from, to: to)).map(\.events) == [7])

        // Every skipped message is in the dead-letter file with where it came from and its bytes.
        let letters = try fixture.deadLetters()
        #expect(sink.counters.deadLetters == 6 && letters.count == 6)
        #expect(
            Set(letters.compactMap { $0["topic"] as? String }) == [
                KafkaFixture.batchesTopic, KafkaFixture.deploysTopic,
            ])
        #expect(letters.allSatisfy { $0["partition"] is Int && $0["offset"] is Int && $0["reason"] is String })
        let saved = letters.compactMap { ($0["value"] as? String).flatMap { Data(base64Encoded: $0) } }
        #expect(
            Set(saved.map { [UInt8]($0) })
                == Set([values[0], values[2], values[3], values[5], values[6], Array("{}".utf8)]))
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

    @Test func aStoreFailureRetriesTheSameStepAndMovesNothingUntilItCommits() async throws {
        let fixture = try SinkFixture()
        let (events, messages) = try await fixture.publishTraffic(batches: 10, installs: 5)
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

/// A store whose first `failures` commits throw a retriable error; with `commitsFirst` they commit before throwing,
/// as a transaction whose answer a lost connection swallowed.
final class FlakyStore: SinkStore {
    private let store: any RollupStore
    private let remaining: Mutex<Int>
    private let commitsFirst: Bool

    init(wrapping store: any RollupStore, failures: Int, commitsFirst: Bool = false) {
        self.store = store
        self.remaining = Mutex(failures)
        self.commitsFirst = commitsFirst
    }

    func commit(_ steps: [PartitionStep]) throws {
        let fails = remaining.withLock { count in
            defer { count = max(0, count - 1) }
            return count > 0
        }
        if fails {
            if commitsFirst { try store.commit(steps) }
            throw RollupStoreError(.busy, "injected by a test", isRetriable: true)
        }
        try store.commit(steps)
    }

    func position(topic: String, partition: Int) throws -> PartitionPosition {
        try store.position(topic: topic, partition: partition)
    }

    func recordDeploy(_ deploy: DeployMarker) throws { try store.recordDeploy(deploy) }
    func recordManifest(_ manifest: CapabilityManifest) throws { try store.recordManifest(manifest) }
}

/// A sink behind (its polls come back full) counts several polls in one step, one store transaction, within its
/// bounds; the store's totals are the same either way.
@Suite struct SpanningStepTests {
    /// Publishes 80 batches, drives a sink with polls of 4 messages until it counted them, and returns the polls
    /// that read records and the partition steps it committed.
    private static func run(
        configure: @escaping @Sendable (inout RollupSinkConfiguration) -> Void
    ) async throws -> (polls: Int, steps: Int, stepPolls: Int) {
        let fixture = try SinkFixture()
        let (events, messages) = try await fixture.publishTraffic(batches: 80, installs: 20)
        let sink = try fixture.makeSink(
            group: "spanning-\(UUID().uuidString)",
            configure: {
                $0.maxBatch = 4
                $0.stepInterval = .seconds(1)
                $0.freshnessInterval = .seconds(3_600)
                configure(&$0)
            })
        defer { sink.stop() }
        let polls = try await onThread {
            var polls = 0
            let deadline = ContinuousClock.now + Eventually.hangGuard
            while sink.counters.applied < messages && ContinuousClock.now < deadline {
                if try sink.pollOnce() > 0 { polls += 1 }
            }
            return polls
        }
        #expect(sink.counters.applied == messages)
        #expect(sink.openStepRecords == 0)
        let totals = try fixture.totals()
        #expect(totals.events == events)
        #expect(totals.batches == 80)
        #expect(abs(totals.installs - 20) <= 1)
        return (polls, sink.counters.batches, sink.counters.stepPolls)
    }

    @Test func fullPollsAreCountedInOneStep() async throws {
        let (polls, steps, stepPolls) = try await Self.run { $0.maxStepDuration = .seconds(60) }
        // 80 records in polls of 4: at least 20 polls. Each poll committed alone would make at least one partition
        // step per poll; spanning makes one per partition per step (three partitions), plus a freshness step each.
        #expect(polls >= 20)
        #expect(steps < polls / 2, "\(steps) partition steps for \(polls) polls")
        #expect(stepPolls > steps && stepPolls <= polls, "\(stepPolls) polls in \(steps) partition steps")
    }

    /// A step over several polls whose commit fails is committed again as built (its records are gone); one whose
    /// commit went through although it failed is fenced on the retry and its partitions read again from the store's
    /// offsets. Either way the store counts every batch once.
    @Test(arguments: [false, true])
    func aStepOverSeveralPollsSurvivesAFailedCommit(committedAnyway: Bool) async throws {
        let fixture = try SinkFixture()
        let (events, _) = try await fixture.publishTraffic(batches: 40, installs: 10)
        let flaky = FlakyStore(wrapping: fixture.store, failures: 2, commitsFirst: committedAnyway)
        let sink = try fixture.makeSink(
            group: "spanning-flaky-\(UUID().uuidString)", store: flaky,
            configure: {
                $0.maxBatch = 4
                $0.stepInterval = .seconds(1)
                $0.maxStepDuration = .seconds(60)
                $0.freshnessInterval = .seconds(3_600)
            })
        defer { sink.stop() }
        let totals = try await onThread {
            let deadline = ContinuousClock.now + Eventually.hangGuard
            while try fixture.totals().events < events && ContinuousClock.now < deadline { try sink.pollOnce() }
            // A few more polls: nothing is counted again.
            for _ in 0..<3 { try sink.pollOnce() }
            return try fixture.totals()
        }
        #expect(totals.events == events)
        #expect(totals.batches == 40)
        if committedAnyway {
            // The first step, every poll of the topic, went through unacknowledged; its retry met the fence.
            #expect(sink.counters.errors >= 1 && sink.counters.fenced >= 1, "\(sink.counters)")
        } else {
            #expect(sink.counters.errors >= 2)
            #expect(sink.counters.stepPolls > 2, "\(sink.counters)")
            #expect(sink.counters.applied == 40)
        }
    }

    @Test func theRollupBoundEndsAStepAtEveryPoll() async throws {
        let (polls, steps, _) = try await Self.run {
            $0.maxStepDuration = .seconds(60)
            $0.maxStepRollups = 1
        }
        #expect(steps >= polls, "\(steps) partition steps for \(polls) polls")
    }

    @Test func aStepEndsAfterItsLongestDuration() async throws {
        let (polls, steps, _) = try await Self.run { $0.maxStepDuration = .zero }
        #expect(steps >= polls, "\(steps) partition steps for \(polls) polls")
    }
}
