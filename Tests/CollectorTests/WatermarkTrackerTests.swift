import FlowmeterModels
import Testing

@testable import Collector

/// The rollup publisher's watermark moves only past flushes whose every message is done, in order.
@Suite struct WatermarkTrackerTests {
    private static func at(_ second: Int64) -> Timestamp { Timestamp(secondsSinceEpoch: 1_000 + second) }

    @Test func theWatermarkWaitsForTheOldestFlushStillDelivering() {
        var tracker = WatermarkTracker(startedAt: Self.at(0))
        #expect(tracker.completeUpTo == Self.at(0))
        let first = tracker.flushed(count: 2, drainedAt: Self.at(5))
        let second = tracker.flushed(count: 1, drainedAt: Self.at(10))
        // The second flush is delivered first: the watermark still waits for the first.
        tracker.finish(second)
        #expect(tracker.completeUpTo == Self.at(0))
        tracker.finish(first)
        #expect(tracker.completeUpTo == Self.at(0) && tracker.hasPending)
        tracker.finish(first)
        #expect(tracker.completeUpTo == Self.at(10) && !tracker.hasPending)
        // A flush with nothing to send (an idle collector) moves the watermark at once.
        _ = tracker.flushed(count: 0, drainedAt: Self.at(15))
        #expect(tracker.completeUpTo == Self.at(15))
        // Finishing an unknown or finished flush changes nothing.
        tracker.finish(first)
        #expect(tracker.completeUpTo == Self.at(15))
    }

    @Test func aRecoveredSpoolHoldsEveryClaimUntilItIsReplayed() {
        var tracker = WatermarkTracker(startedAt: Self.at(0), awaitsRecovered: true)
        #expect(!tracker.hasClaim)
        _ = tracker.flushed(count: 0, drainedAt: Self.at(5))
        #expect(!tracker.hasClaim)
        tracker.finish(WatermarkTracker.recoveredFlush)
        #expect(tracker.hasClaim && tracker.completeUpTo == Self.at(5))
    }
}
