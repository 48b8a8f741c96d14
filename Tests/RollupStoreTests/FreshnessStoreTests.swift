import FlowmeterModels
import Foundation
import RollupStore
import Rollups
import Testing

/// Collectors' watermarks in every store: the newest per collector and partition is kept, whatever order they come
/// in, and they survive a reopen.
@Suite struct FreshnessStoreTests {
    private static func watermark(
        _ collector: String, _ partition: Int, of partitions: Int = 2, at second: Int64, stopped: Bool = false
    ) -> CollectorWatermark {
        CollectorWatermark(
            collector: collector, partition: partition, partitions: partitions,
            completeUpTo: Timestamp(secondsSinceEpoch: RollupFactory.base + second, nanoseconds: 5_000),
            isStopped: stopped)
    }

    @Test(arguments: StoreKind.allCases)
    func theNewestWatermarkPerCollectorAndPartitionIsKept(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        let reference = InMemoryRollupStore()
        #expect(try fixture.store.freshness() == StoreFreshness())
        let batches: [[CollectorWatermark]] = [
            [Self.watermark("collector-b", 1, at: 100), Self.watermark("collector-a", 0, at: 120)],
            // An older one replayed after a rebalance, and two for one slot in one call: the newest stays.
            [Self.watermark("collector-a", 0, at: 60), Self.watermark("collector-a", 1, at: 90)],
            [Self.watermark("collector-a", 1, at: 150), Self.watermark("collector-a", 1, at: 140)],
            // A stop at the same instant supersedes the heartbeat; a heartbeat at the same instant does not undo it.
            [Self.watermark("collector-b", 1, at: 100, stopped: true)],
            [Self.watermark("collector-b", 1, at: 100)],
        ]
        for batch in batches {
            try fixture.store.recordWatermarks(batch)
            try reference.recordWatermarks(batch)
        }
        let expected = [
            Self.watermark("collector-a", 0, at: 120), Self.watermark("collector-a", 1, at: 150),
            Self.watermark("collector-b", 1, at: 100, stopped: true),
        ]
        #expect(try reference.freshness().watermarks == expected)
        #expect(try fixture.store.freshness().watermarks == expected)
        if kind.isSQL {
            #expect(try fixture.reopen().freshness().watermarks == expected)
            // A new store has removed nothing.
            #expect(try fixture.store.freshness().retention == RetentionHorizon())
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aStoreJudgedAgainstAClockSaysWhoIsBehind(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        // collector-a is current on both partitions; collector-b's partition 1 is 3 minutes behind (its sink is
        // down); collector-c stopped cleanly an hour ago.
        try fixture.store.recordWatermarks([
            Self.watermark("collector-a", 0, at: 3_600), Self.watermark("collector-a", 1, at: 3_590),
            Self.watermark("collector-b", 0, at: 3_595), Self.watermark("collector-b", 1, at: 3_420),
            Self.watermark("collector-c", 0, at: 10, stopped: true),
            Self.watermark("collector-c", 1, at: 10, stopped: true),
        ])
        let now = Timestamp(secondsSinceEpoch: RollupFactory.base + 3_605)
        let assessed = FreshnessAssessment(try fixture.store.freshness(), now: now)
        #expect(assessed.collectors.map(\.name) == ["collector-a", "collector-b", "collector-c"])
        #expect(assessed.collectors.map(\.status) == [.current, .behind, .stopped])
        #expect(assessed.collectors[1].lagSeconds == 185)
        #expect(assessed.collectors.map(\.partitionsBehind) == [0, 1, 2])
        #expect(assessed.completeUpTo?.secondsSinceEpoch == RollupFactory.base + 3_420)
        #expect(!assessed.isComplete(endingAt: now))
        // A window that ended before collector-b's point is complete.
        #expect(assessed.isComplete(endingAt: Timestamp(secondsSinceEpoch: RollupFactory.base + 3_400)))
    }

    @Test(arguments: StoreKind.allCases)
    func theSinksStepsAreTheBatchesTopicsFreshness(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        let topic = "flowmeter.batches.v1"
        func step(_ partition: Int, from start: Int64?, to next: Int64, at second: Int64?) -> PartitionStep {
            PartitionStep(
                topic: topic, partition: partition, partitions: 3, startOffset: start, nextOffset: next,
                completeUpTo: second.map { Timestamp(secondsSinceEpoch: RollupFactory.base + $0) })
        }
        // Partition 2 has been read but never caught up: no freshness yet.
        try fixture.store.commit(step(0, from: nil, to: 40, at: 3_600))
        try fixture.store.commit(step(1, from: nil, to: 12, at: 3_590))
        try fixture.store.commit(step(2, from: nil, to: 7, at: nil))
        let now = Timestamp(secondsSinceEpoch: RollupFactory.base + 3_605)
        var assessed = FreshnessAssessment(try fixture.store.freshness(), now: now)
        #expect(assessed.collectors.map(\.name) == [topic])
        #expect(assessed.collectors[0].status == .behind)
        #expect(assessed.collectors[0].partitionsReported == 2)
        #expect(assessed.collectors[0].partitionsBehind == 1)
        #expect(assessed.completeUpTo == nil)
        try fixture.store.commit(step(2, from: 7, to: 9, at: 3_595))
        assessed = FreshnessAssessment(try fixture.store.freshness(), now: now)
        #expect(assessed.collectors[0].status == .current)
        #expect(assessed.collectors[0].partitionsBehind == 0)
        #expect(assessed.completeUpTo?.secondsSinceEpoch == RollupFactory.base + 3_590)
    }
}
