import FlowmeterModels
import Foundation
import RollupStore
import Rollups
import Sink
import TestSupport
import Testing

/// The dedupe state of one partition: the horizon in the log's time, its bounds, and a restart that reloads it
/// from the store.
@Suite struct DedupeWindowTests {
    /// A window behind a reference, so that `#expect` (which cannot call a mutating method) can admit keys.
    private final class Window {
        var window: DedupeWindow

        init(_ window: DedupeWindow) {
            self.window = window
        }

        func admit(_ key: String, receivedAt: Int64) -> Bool { window.admit(key, receivedAt: receivedAt) }
        var count: Int { window.count }
        var forgetBefore: Int64 { window.forgetBefore }
    }

    @Test func copyWithinTheHorizonOfLogTimeIsSkipped() {
        let window = Window(DedupeWindow(horizonSeconds: 3600, maxEntries: 1000))
        #expect(window.admit("a", receivedAt: 1_000) == true)
        #expect(window.admit("a", receivedAt: 1_000) == false)
        #expect(window.admit("a", receivedAt: 1_000 + 1_800) == false)
        #expect(window.admit("a", receivedAt: 1_000 + 3_600) == false)
        // Past the horizon, measured in receivedAt (not in when the sink reads it): counted again.
        #expect(window.admit("a", receivedAt: 1_000 + 3_601) == true)
        // Another key is never a copy.
        #expect(window.admit("b", receivedAt: 1_000 + 3_601) == true)
        #expect(window.count == 2)
    }

    @Test func replayDecidesAsTheFirstReadingDid() {
        let arrivals: [(String, Int64)] = (0..<2_000).map { index in
            ("key-\(index % 300)", 10_000 + Int64(index) * 7)
        }
        func decisions() -> [Bool] {
            let window = Window(DedupeWindow(horizonSeconds: 3_600, maxEntries: 10_000))
            return arrivals.map { window.admit($0.0, receivedAt: $0.1) }
        }
        let first = decisions()
        #expect(first == decisions())
        // Each key comes back every 2,100 s: its second copy is within the horizon, its third past it.
        #expect(first.filter { !$0 }.count > 0)
        #expect(first.filter { $0 }.count > 300)
    }

    @Test func keysOlderThanTheHorizonAreForgotten() {
        let window = Window(DedupeWindow(horizonSeconds: 60, maxEntries: 1_000_000))
        for second in 0..<10_000 {
            #expect(window.admit("key-\(second)", receivedAt: Int64(second)) == true)
        }
        // Only the keys of the last minute of log time stay.
        #expect(window.count <= 62)
        #expect(window.forgetBefore == 9_999 - 60)
        #expect(window.admit("key-9990", receivedAt: 9_999) == false)
    }

    @Test func memoryStaysBoundedUnderAFlood() {
        let bound = 500
        let window = Window(DedupeWindow(horizonSeconds: 3600, maxEntries: bound))
        for index in 0..<50_000 {
            #expect(window.admit("key-\(index)", receivedAt: 1_000 + Int64(index / 100)) == true)
            #expect(window.count <= bound)
        }
        // The oldest went first; the newest are still remembered, and the horizon the store keeps moved up with
        // what was forgotten.
        #expect(window.admit("key-49999", receivedAt: 1_499) == false)
        #expect(window.forgetBefore > 1_000)
        #expect(window.forgetBefore <= 1_499)
    }

    @Test func windowMadeFromWhatTheStoreHoldsDedupesTheSame() {
        var live = DedupeWindow(horizonSeconds: 3600, maxEntries: 1000)
        var counted: [CountedBatch] = []
        for index in 0..<50 where live.admit("key-\(index)", receivedAt: 5_000 + Int64(index) * 60) {
            counted.append(CountedBatch(key: "key-\(index)", receivedAt: 5_000 + Int64(index) * 60))
        }
        let restarted = Window(DedupeWindow(horizonSeconds: 3600, maxEntries: 1000, counted: counted.shuffled()))
        #expect(restarted.count == live.count)
        #expect(restarted.forgetBefore == live.forgetBefore)
        for index in 0..<60 {
            let time = 5_000 + 50 * 60 + Int64(index) * 30
            let decided = live.admit("key-\(index)", receivedAt: time)
            #expect(restarted.admit("key-\(index)", receivedAt: time) == decided)
        }
    }

    @Test func restartMidHorizonReloadsTheStateFromTheStore() throws {
        let directory = try TemporaryDirectory(prefix: "flowmeter-dedupe")
        defer { directory.remove() }
        let url = directory.file("rollups.sqlite")
        let topic = KafkaFixture.batchesTopic
        let start: Int64 = 1_800_000_000
        func record(_ id: String, at seconds: Int64) -> [UInt8] {
            let events = [
                DiagnosticEvent(
                    kind: .unknownType, widgetType: "type-\(id)", count: 2,
                    occurredAt: Timestamp(secondsSinceEpoch: seconds))
            ]
            return SinkFixture.records(
                batchID: id, client: SinkFixture.client(index: 0), events: events,
                installHash: SinkFixture.installHash(1),
                receivedAt: Timestamp(secondsSinceEpoch: seconds)
            ).values[0]
        }
        do {
            let store = try openRollupStore(url: url)
            let steps = PartitionSteps(topic: topic, store: store, horizon: .seconds(3600), maxEntries: 1000)
            let made = try steps.makeStep(
                partition: 0, partitions: 1,
                records: [
                    (0, record("a", at: start)), (1, record("b", at: start + 10)), (2, record("a", at: start + 20)),
                ],
                caughtUpAt: nil)
            #expect(made.outcome.counted == 2)
            #expect(made.outcome.duplicates == 1)
            try steps.commit(made.step)
        }
        // A new sink (a restart, or another member taking the partition over) half an hour of log time later.
        let store = try openRollupStore(url: url)
        let position = try store.position(topic: topic, partition: 0)
        #expect(position.nextOffset == 3)
        #expect(position.counted.count == 2)
        let steps = PartitionSteps(topic: topic, store: store, horizon: .seconds(3600), maxEntries: 1000)
        #expect(try steps.storedOffset(partition: 0) == 3)
        let made = try steps.makeStep(
            partition: 0, partitions: 1,
            records: [
                (3, record("a", at: start + 1_800)),  // a retry within the horizon: skipped
                (4, record("c", at: start + 1_800)),  // new
                (5, record("b", at: start + 3_611)),  // past b's horizon: counted again
            ],
            caughtUpAt: nil)
        #expect(made.outcome.duplicates == 1)
        #expect(made.outcome.counted == 2)
        try steps.commit(made.step)
        let after = try store.position(topic: topic, partition: 0)
        #expect(after.nextOffset == 6)
        // What the store remembers moved on with the horizon: a is past it now, so only b's later copy and c remain.
        #expect(Set(after.counted.map(\.receivedAt)) == [start + 1_800, start + 3_611])
    }

    @Test func forgettingByTheHorizonIsNotAnEviction() {
        var window = DedupeWindow(horizonSeconds: 60, maxEntries: 1_000)
        for second in 0..<600 { _ = window.admit("key-\(second)", receivedAt: Int64(second)) }
        #expect(window.evicted == 0)
        #expect(window.isForgottenEarly(receivedAt: 500) == false)
    }

    @Test func forgetOldestForgetsAWholeSecondAndSaysSo() {
        var window = DedupeWindow(horizonSeconds: 3_600, maxEntries: 1_000)
        for index in 0..<30 { _ = window.admit("key-\(index)", receivedAt: 1_000 + Int64(index / 10)) }
        #expect(window.oldestReceivedAt == 1_000)
        // The ten keys of second 1,000 go together, as the store forgets by whole seconds.
        #expect(window.forgetOldest() == 10)
        #expect(window.count == 20)
        #expect(window.evicted == 10)
        #expect(window.forgetBefore == 1_001)
        #expect(window.oldestReceivedAt == 1_001)
        // A copy of a forgotten key within the horizon is counted again, and the window says it could not check it.
        #expect(window.isForgottenEarly(receivedAt: 1_000) == true)
        #expect(window.admit("key-0", receivedAt: 1_000) == true)
        #expect(window.isForgottenEarly(receivedAt: 1_001) == false)
        #expect(window.admit("key-10", receivedAt: 1_001) == false)
    }

    /// `count` batch records of batches `prefix-0`… at offsets from `first`, received one a second from `start`.
    private static func records(
        _ prefix: String, count: Int, from first: Int64, receivedFrom start: Int64
    ) -> [(offset: Int64, value: [UInt8])] {
        (0..<count).map { index in
            let seconds = start + Int64(index)
            let events = [
                DiagnosticEvent(
                    kind: .unknownType, widgetType: "type-\(index % 3)", count: 1,
                    occurredAt: Timestamp(secondsSinceEpoch: seconds))
            ]
            let value = SinkFixture.records(
                batchID: "\(prefix)-\(index)", client: SinkFixture.client(index: 0), events: events,
                installHash: SinkFixture.installHash(1), receivedAt: Timestamp(secondsSinceEpoch: seconds)
            ).values[0]
            return (first + Int64(index), value)
        }
    }

    @Test func oneBoundIsSharedByEveryPartitionTheSinkHolds() throws {
        let directory = try TemporaryDirectory(prefix: "flowmeter-dedupe")
        defer { directory.remove() }
        let store = try openRollupStore(url: directory.file("rollups.sqlite"))
        let start: Int64 = 1_800_000_000
        let steps = PartitionSteps(
            topic: KafkaFixture.batchesTopic, store: store, horizon: .seconds(3600), maxEntries: 100)
        // Three partitions, 60 batches each, partition 0's received first: 180 to remember, 100 allowed.
        var evicted = 0
        for partition in 0..<3 {
            let made = try steps.makeStep(
                partition: partition, partitions: 3,
                records: Self.records("p\(partition)", count: 60, from: 0, receivedFrom: start + Int64(partition) * 60),
                caughtUpAt: nil)
            #expect(made.outcome.counted == 60)
            #expect(made.outcome.unchecked == 0)
            #expect(steps.rememberedBatches <= 100)
            evicted += made.outcome.evicted
            try steps.commit(made.step)
        }
        #expect(steps.rememberedBatches == 100)
        #expect(evicted == 80)
        // The oldest by log time went, whichever partition held them: all of partition 0, 20 of partition 1.
        #expect(steps.rememberedBatches(partition: 0) == 0)
        #expect(steps.rememberedBatches(partition: 1) == 40)
        #expect(steps.rememberedBatches(partition: 2) == 60)
        // A copy of a batch forgotten early is counted again, and the step says it could not check it; a copy of one
        // still remembered is skipped.
        let again = try steps.makeStep(
            partition: 1, partitions: 3,
            records: Self.records("p1", count: 60, from: 60, receivedFrom: start + 60), caughtUpAt: nil)
        #expect(again.outcome.duplicates == 40)
        #expect(again.outcome.counted == 20)
        #expect(again.outcome.unchecked == 20)
        #expect(steps.rememberedBatches <= 100)
        try steps.commit(again.step)
    }

    @Test func restartMidHorizonKeepsTheSinkWideBound() throws {
        let directory = try TemporaryDirectory(prefix: "flowmeter-dedupe")
        defer { directory.remove() }
        let url = directory.file("rollups.sqlite")
        let topic = KafkaFixture.batchesTopic
        let start: Int64 = 1_800_000_000
        do {
            let store = try openRollupStore(url: url)
            let steps = PartitionSteps(topic: topic, store: store, horizon: .seconds(3600), maxEntries: 1_000)
            for partition in 0..<2 {
                let made = try steps.makeStep(
                    partition: partition, partitions: 2,
                    records: Self.records("p\(partition)", count: 50, from: 0, receivedFrom: start + Int64(partition)),
                    caughtUpAt: nil)
                try steps.commit(made.step)
            }
            #expect(steps.rememberedBatches == 100)
        }
        // Restarted half-way through the horizon with a smaller bound: loading both partitions keeps within it, the
        // oldest (partition 0's first seconds) forgotten first.
        let store = try openRollupStore(url: url)
        let steps = PartitionSteps(topic: topic, store: store, horizon: .seconds(3600), maxEntries: 60)
        #expect(try steps.storedOffset(partition: 0) == 50)
        #expect(steps.rememberedBatches == 50)
        #expect(try steps.storedOffset(partition: 1) == 50)
        #expect(steps.rememberedBatches <= 60)
        // Copies of partition 1's batches: those still remembered are skipped, the others counted and reported.
        let made = try steps.makeStep(
            partition: 1, partitions: 2,
            records: Self.records("p1", count: 50, from: 50, receivedFrom: start + 1), caughtUpAt: nil)
        #expect(made.outcome.duplicates + made.outcome.counted == 50)
        #expect(made.outcome.duplicates >= 10)
        #expect(made.outcome.unchecked == made.outcome.counted)
        #expect(steps.rememberedBatches <= 60)
    }

    @Test func batchKeysAndOtherStringsAreNeverConfused() {
        var window = DedupeWindow(horizonSeconds: 3_600, maxEntries: 1_000)
        let key = BatchRecord.key(appID: "com.example.shop", batchID: "b-1", part: 0)
        #expect(key.utf8.count == 32)
        #expect(window.admit(key, receivedAt: 1_000) == true)
        #expect(window.admit(key, receivedAt: 1_001) == false)
        // The same digits spelled in upper case, or one digit longer, are other keys.
        #expect(window.admit(key.uppercased(), receivedAt: 1_002) == true)
        #expect(window.admit(key + "0", receivedAt: 1_002) == true)
        #expect(window.admit(String(key.dropLast()), receivedAt: 1_002) == true)
        #expect(window.admit(String(key.dropLast()), receivedAt: 1_003) == false)
        #expect(window.count == 4)
    }
}
