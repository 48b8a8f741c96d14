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
}
