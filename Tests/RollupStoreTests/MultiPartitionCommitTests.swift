import FlowmeterModels
import Foundation
import RollupStore
import Rollups
import Testing

/// A sink commits the steps of every partition of a poll in one transaction: all of them or none, each partition
/// fenced by its own stored offset.
@Suite struct MultiPartitionCommitTests {
    private static let topic = "flowmeter.batches.v1"

    private static func step(
        _ partition: Int, from start: Int64?, to next: Int64, series: [SeriesRollup] = [], counted: [String] = []
    ) -> PartitionStep {
        PartitionStep(
            topic: topic, partition: partition, partitions: 3, startOffset: start, nextOffset: next, series: series,
            counted: counted.map { CountedBatch(key: $0, receivedAt: RollupFactory.base) })
    }

    private static let rollups = [
        RollupFactory.seriesRollup(RollupFactory.series(widget: "hologram"), minute: 1, events: 4),
        RollupFactory.seriesRollup(RollupFactory.series(widget: "carousel"), minute: 2, events: 7),
    ]

    @Test(arguments: StoreKind.allCases)
    func theStepsOfSeveralPartitionsCommitTogether(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        try fixture.store.commit(Self.step(2, from: nil, to: 3))
        try fixture.store.commit([
            Self.step(0, from: nil, to: 10, series: Self.rollups, counted: ["a0"]),
            Self.step(2, from: 3, to: 8, counted: ["c0", "c1"]),
        ])
        #expect(try fixture.store.position(topic: Self.topic, partition: 0).nextOffset == 10)
        #expect(try fixture.store.position(topic: Self.topic, partition: 0).counted.map(\.key) == ["a0"])
        #expect(try fixture.store.position(topic: Self.topic, partition: 2).nextOffset == 8)
        #expect(try fixture.store.position(topic: Self.topic, partition: 2).counted.map(\.key) == ["c0", "c1"])
        let stored = try fixture.store.seriesRollups(
            SeriesQuery(from: RollupFactory.at(minute: 0), to: RollupFactory.at(minute: 60)))
        #expect(stored.map(\.events).sorted() == [4, 7])
    }

    @Test(arguments: StoreKind.allCases)
    func onePartitionFencedRefusesTheWholeCommit(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        // Another sink took partition 1 and moved it to 5; this sink's step still starts it from nothing.
        try fixture.store.commit(Self.step(1, from: nil, to: 5))
        #expect(
            throws: PartitionFenced(partition: 1, expected: nil, stored: 5),
            performing: {
                try fixture.store.commit([
                    Self.step(0, from: nil, to: 10, series: Self.rollups, counted: ["a0"]),
                    Self.step(1, from: nil, to: 7, counted: ["b0"]),
                ])
            })
        // Nothing of the commit is there: not partition 0's offset, its counted batch, nor the rollups.
        #expect(try fixture.store.position(topic: Self.topic, partition: 0) == PartitionPosition(nextOffset: nil))
        #expect(try fixture.store.position(topic: Self.topic, partition: 1) == PartitionPosition(nextOffset: 5))
        let stored = try fixture.store.seriesRollups(
            SeriesQuery(from: RollupFactory.at(minute: 0), to: RollupFactory.at(minute: 60)))
        #expect(stored.isEmpty)
        // The partition this sink still owns commits alone.
        try fixture.store.commit(Self.step(0, from: nil, to: 10, series: Self.rollups, counted: ["a0"]))
        #expect(try fixture.store.position(topic: Self.topic, partition: 0).nextOffset == 10)
    }
}

/// Two sinks of one group own different partitions but write the same rows: the dedupe key spreads every app,
/// version and minute over all partitions. Each transaction locks the rows it merges (`FOR UPDATE` in PostgreSQL);
/// taken in two orders, two such transactions wait for each other and PostgreSQL aborts one as a deadlock, after its
/// `deadlock_timeout`. Here the two sinks' steps hold the same 300 series-minutes (three bulk chunks) in opposite
/// orders and commit at the same moment, five times: every commit goes through, and every count is there.
@Suite struct ConcurrentSinkCommitTests {
    @Test(arguments: [StoreKind.sqlite, .postgres])
    func twoSinksMergingTheSameRowsInOppositeOrdersNeverDeadlock(kind: StoreKind) async throws {
        let fixture = try StoreFixture(kind)
        let stores = [fixture.store, try fixture.reopen()]
        let rollups = (0..<300).map {
            RollupFactory.seriesRollup(RollupFactory.series(widget: "type_\($0)"), minute: 1 + $0 % 3, events: 1)
        }
        let rounds = 5
        for round in 0..<rounds {
            let failures = await withTaskGroup(of: String?.self) { group in
                for (partition, store) in stores.enumerated() {
                    let step = PartitionStep(
                        topic: "flowmeter.batches.v1", partition: partition, partitions: 2,
                        startOffset: round == 0 ? nil : Int64(round * 10), nextOffset: Int64(round * 10 + 10),
                        series: partition == 0 ? rollups : rollups.reversed(),
                        counted: [CountedBatch(key: "b\(partition)-\(round)", receivedAt: RollupFactory.base)])
                    group.addTask {
                        await failure(on: "partition \(partition), round \(round)") { try store.commit(step) }
                    }
                }
                var failures: [String] = []
                for await failure in group { if let failure { failures.append(failure) } }
                return failures
            }
            try #require(failures.isEmpty, "\(failures)")
        }
        let stored = try fixture.store.seriesRollups(
            SeriesQuery(from: RollupFactory.at(minute: 0), to: RollupFactory.at(minute: 60)))
        #expect(stored.count == 300)
        #expect(stored.allSatisfy { $0.events == Int64(2 * rounds) }, "\(Set(stored.map(\.events)))")
    }
}

/// A prune deletes old rows in batches while a sink may merge rows into the same old minutes (a very late batch, a
/// rebuild); the prune's deletes and the sink's `FOR UPDATE` reads lock those rows in different orders, so each
/// delete batch takes its turn among the rollup writers too. Here a sink merges 3,000 old series-minutes (in
/// reverse order) while a prune deletes them 300 at a time, five rounds: both finish every time, without a deadlock.
@Suite struct PruneDuringCommitTests {
    @Test(arguments: [StoreKind.sqlite, .postgres])
    func aPruneAndASinkOnTheSameOldRowsNeverDeadlock(kind: StoreKind) async throws {
        let fixture = try StoreFixture(kind)
        let pruning = try fixture.reopen()
        guard let pruner = pruning as? any RollupStoreMaintenance else {
            Issue.record("\(kind) store has no prune")
            return
        }
        let rollups = (0..<3_000).map {
            RollupFactory.seriesRollup(RollupFactory.series(widget: "type_\($0)"), minute: 1 + $0 % 5, events: 1)
        }
        let policy = {
            var policy = RetentionPolicy()
            policy.batchRows = 300
            return policy
        }()
        let now = Timestamp(secondsSinceEpoch: RollupFactory.base + 30 * 86_400)
        for round in 0..<5 {
            let seed = PartitionStep(
                topic: "flowmeter.batches.v1", partition: 0, partitions: 2,
                startOffset: round == 0 ? nil : Int64(round * 10), nextOffset: Int64(round * 10 + 10), series: rollups)
            try fixture.store.commit(seed)
            let late = PartitionStep(
                topic: "flowmeter.batches.v1", partition: 1, partitions: 2,
                startOffset: round == 0 ? nil : Int64(round * 10), nextOffset: Int64(round * 10 + 10),
                series: rollups.reversed())
            let store = fixture.store
            let failures = await withTaskGroup(of: String?.self) { group in
                group.addTask { await failure(on: "commit, round \(round)") { try store.commit(late) } }
                group.addTask {
                    await failure(on: "prune, round \(round)") {
                        _ = try pruner.prune(policy, now: now, shouldContinue: { true })
                    }
                }
                var failures: [String] = []
                for await failure in group { if let failure { failures.append(failure) } }
                return failures
            }
            try #require(failures.isEmpty, "\(failures)")
        }
    }
}

/// Runs `body` on a thread of its own (a store's calls block); nil when it returned, else what it threw, after
/// `label`.
private func failure(on label: String, _ body: @escaping @Sendable () throws -> Void) async -> String? {
    await withCheckedContinuation { continuation in
        Thread {
            do {
                try body()
                continuation.resume(returning: nil)
            } catch {
                continuation.resume(returning: "\(label): \(error)")
            }
        }.start()
    }
}
