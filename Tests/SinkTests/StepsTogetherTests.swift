import FlowmeterModels
import Foundation
import RollupStore
import Rollups
import Sink
import Synchronization
import TestSupport
import Testing

/// The partitions of one poll are counted as one step: one aggregator, so a series-minute they share is one rollup,
/// and one store transaction that moves every partition's offset, or none when one of them was taken over.
@Suite struct StepsTogetherTests {
    private static let start: Int64 = 1_800_000_000
    private static let topic = KafkaFixture.batchesTopic

    private static func record(_ id: String, widget: String = "hologram", count: Int = 2) -> [UInt8] {
        let events = [
            DiagnosticEvent(
                kind: .unknownType, widgetType: widget, count: count,
                occurredAt: Timestamp(secondsSinceEpoch: start + 5))
        ]
        return SinkFixture.records(
            batchID: id, client: SinkFixture.client(index: 0), events: events,
            installHash: SinkFixture.installHash(1), receivedAt: Timestamp(secondsSinceEpoch: start + 10)
        ).values[0]
    }

    private typealias Records = [(offset: Int64, value: [UInt8])]

    /// A SQLite store in `directory` and the steps of one sink over it.
    private static func steps(in directory: TemporaryDirectory) throws -> (any RollupStore, PartitionSteps) {
        let store = try openRollupStore(url: directory.file("rollups.sqlite"))
        return (store, PartitionSteps(topic: topic, store: store, horizon: .seconds(3600), maxEntries: 1000))
    }

    @Test func aSeriesMinuteThePartitionsShareIsOneRollup() throws {
        let directory = try TemporaryDirectory(prefix: "flowmeter-steps-together")
        defer { directory.remove() }
        let (store, steps) = try Self.steps(in: directory)
        let made = try steps.makeSteps(
            [
                .init(
                    partition: 0, records: [(0, Self.record("a")), (1, Self.record("b"))] as Records, caughtUpAt: nil),
                .init(
                    partition: 2, records: [(7, Self.record("c", count: 5)), (8, Self.record("a"))] as Records,
                    caughtUpAt: nil),
            ], partitions: 3)
        // "a" on partition 2 is not a copy of partition 0's "a": every copy of a batch lands on one partition, and
        // each partition keeps its own dedupe state.
        #expect(made.outcome.counted == 4)
        #expect(made.steps.map(\.partition) == [0, 2])
        #expect(made.steps.map(\.nextOffset) == [2, 9])
        #expect(made.steps.map(\.counted.count) == [2, 2])
        #expect(made.steps[0].series.count == 1)
        #expect(made.steps[0].series.first?.events == 11)
        #expect(made.steps[1].series.isEmpty && made.steps[1].versions.isEmpty)
        try steps.commit(made.steps)
        #expect(try store.position(topic: Self.topic, partition: 0).nextOffset == 2)
        #expect(try store.position(topic: Self.topic, partition: 2).nextOffset == 9)
        #expect(try steps.storedOffset(partition: 2) == 9)
        let stored = try store.seriesRollups(
            SeriesQuery(
                from: Timestamp(secondsSinceEpoch: Self.start - 60),
                to: Timestamp(secondsSinceEpoch: Self.start + 120)))
        #expect(stored.map(\.events) == [11])
    }

    @Test func aStepSpansSeveralAddsAndCopiesAcrossThemAreSkipped() throws {
        let directory = try TemporaryDirectory(prefix: "flowmeter-steps-together")
        defer { directory.remove() }
        let (store, steps) = try Self.steps(in: directory)
        try steps.add(
            [.init(partition: 0, records: [(0, Self.record("a")), (1, Self.record("b"))] as Records, caughtUpAt: nil)],
            partitions: 3)
        #expect(steps.hasOpenStep && steps.openRecords == 2)
        #expect(try steps.nextOffset(partition: 0) == 2)
        #expect(try steps.storedOffset(partition: 0) == nil)
        // The second add continues partition 0 (a copy of "a" among its records) and brings partition 2 in.
        let now = Timestamp(Date())
        try steps.add(
            [
                .init(partition: 2, records: [(7, Self.record("c", count: 5))] as Records, caughtUpAt: now),
                .init(
                    partition: 0, records: [(2, Self.record("a")), (3, Self.record("d"))] as Records, caughtUpAt: nil),
            ], partitions: 3)
        #expect(steps.openRollups > 0)
        let finished = steps.finishStep()
        #expect(!steps.hasOpenStep && steps.openRecords == 0 && steps.openRollups == 0)
        #expect(finished.outcome.records == 5)
        #expect(finished.outcome.counted == 4)
        #expect(finished.outcome.duplicates == 1)
        #expect(finished.steps.map(\.partition) == [0, 2])
        #expect(finished.steps.map(\.startOffset) == [nil, nil])
        #expect(finished.steps.map(\.nextOffset) == [4, 8])
        #expect(finished.steps.map(\.counted.count) == [3, 1])
        #expect(finished.steps.map(\.completeUpTo) == [nil, now])
        #expect(finished.steps[0].series.first?.events == 11)
        try steps.commit(finished.steps)
        #expect(try store.position(topic: Self.topic, partition: 0).nextOffset == 4)
        #expect(try store.position(topic: Self.topic, partition: 2).nextOffset == 8)
        // The next step starts where this one ended, and still knows "a".
        let again = try steps.makeStep(
            partition: 0, partitions: 3, records: [(4, Self.record("a"))] as Records, caughtUpAt: nil)
        #expect(again.step.startOffset == 4 && again.outcome.duplicates == 1)
    }

    @Test func anAbandonedStepForgetsItsPartitionsAndSaysWhereTheyBegan() throws {
        let directory = try TemporaryDirectory(prefix: "flowmeter-steps-together")
        defer { directory.remove() }
        let (store, steps) = try Self.steps(in: directory)
        try steps.commit(
            try steps.makeStep(
                partition: 1, partitions: 2, records: [(0, Self.record("a"))] as Records, caughtUpAt: nil
            ).step)
        try steps.add(
            [
                .init(partition: 0, records: [(0, Self.record("b"))] as Records, caughtUpAt: nil),
                .init(partition: 1, records: [(1, Self.record("c"))] as Records, caughtUpAt: nil),
            ], partitions: 2)
        try steps.add(
            [.init(partition: 1, records: [(2, Self.record("d"))] as Records, caughtUpAt: nil)], partitions: 2)
        #expect(steps.rememberedBatches == 4)
        let starts = steps.abandonStep()
        #expect(starts == [0: nil, 1: 1])
        #expect(!steps.hasOpenStep && !steps.holds(partition: 0) && !steps.holds(partition: 1))
        #expect(steps.rememberedBatches == 0)
        #expect(steps.finishStep().steps.isEmpty)
        // Read again from the store: only "a" was counted, and "c" is not a copy.
        #expect(try steps.nextOffset(partition: 1) == 1)
        let again = try steps.makeStep(
            partition: 1, partitions: 2, records: [(1, Self.record("c"))] as Records, caughtUpAt: nil)
        #expect(again.outcome.counted == 1 && again.outcome.duplicates == 0)
        try steps.commit(again.step)
        #expect(try store.position(topic: Self.topic, partition: 1).nextOffset == 2)
    }

    @Test func aFencedPartitionDropsEveryPartitionsStateAndCommitsNothing() throws {
        let directory = try TemporaryDirectory(prefix: "flowmeter-steps-together")
        defer { directory.remove() }
        let (store, steps) = try Self.steps(in: directory)
        let made = try steps.makeSteps(
            [
                .init(partition: 0, records: [(0, Self.record("a"))] as Records, caughtUpAt: nil),
                .init(partition: 1, records: [(0, Self.record("b"))] as Records, caughtUpAt: nil),
            ], partitions: 2)
        #expect(steps.rememberedBatches == 2)
        // Another sink counted partition 1 meanwhile.
        try store.commit(PartitionStep(topic: Self.topic, partition: 1, partitions: 2, startOffset: nil, nextOffset: 1))
        #expect(throws: PartitionFenced.self) { try steps.commit(made.steps) }
        #expect(!steps.holds(partition: 0) && !steps.holds(partition: 1))
        #expect(steps.rememberedBatches == 0)
        #expect(try store.position(topic: Self.topic, partition: 0).nextOffset == nil)
        // Partition 0, still this sink's, is counted again from the store's state: "a" is not a copy.
        let again = try steps.makeStep(
            partition: 0, partitions: 2, records: [(0, Self.record("a"))], caughtUpAt: nil)
        #expect(again.outcome.counted == 1)
        try steps.commit(again.step)
        #expect(try store.position(topic: Self.topic, partition: 0).nextOffset == 1)
    }
}

/// A sink whose step over several partitions is fenced on one of them reads every partition of the step again (the
/// fenced one from the store's offset, the others from where the step began) and counts them: no record lost, none
/// counted twice. With polls of 4 messages the step spans several polls, whose records are gone by the fence.
@Suite struct FencedStepTogetherTests {
    @Test(arguments: [5_000, 4])
    func aFenceOnOnePartitionStillCountsTheOthers(maxBatch: Int) async throws {
        let fixture = try SinkFixture()
        let (_, first) = try await fixture.publishTraffic(batches: 30, installs: 10)
        let lines = Mutex<[String]>([])
        // No freshness steps: one of them would meet the fence first, with nothing else in it.
        let sink = try fixture.makeSink(
            group: "fenced-\(UUID().uuidString)",
            configure: {
                $0.freshnessInterval = .seconds(3_600)
                $0.maxBatch = maxBatch
                $0.maxStepDuration = .seconds(60)
            },
            log: { _, message, _ in lines.withLock { $0.append(message) } })
        defer { sink.stop() }
        #expect(try await drive(sink) { $0.applied >= first })
        // Every partition's state is held now. Another sink takes partition 1 over and counts its next record.
        let topic = KafkaFixture.batchesTopic
        let stored = try #require(try fixture.store.position(topic: topic, partition: 1).nextOffset)
        try fixture.store.commit(
            PartitionStep(topic: topic, partition: 1, partitions: 3, startOffset: stored, nextOffset: stored + 1))
        let (_, second) = try await fixture.publishTraffic(batches: 30, installs: 10, idPrefix: "later")
        // The record the other sink counted is not counted again; everything else is.
        #expect(try await drive(sink) { $0.applied >= first + second - 1 && $0.fenced >= 1 })
        #expect(sink.counters.applied == first + second - 1, "\(sink.counters)")
        #expect(sink.counters.fenced == 1)
        #expect(
            lines.withLock {
                $0.contains("another sink moved the partition on; reading the step's partitions again from the store")
            },
            "\(lines.withLock { $0 })")
        #expect(sink.partitionProgress.values.allSatisfy { $0.lag == 0 })
        #expect(sink.partitionProgress.count == 3)
    }
}
