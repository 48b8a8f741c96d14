import FlowmeterModels
import FlowmeterWire
import Testing

@testable import Rollups

/// The shard's internals that no input can reach from outside: a digest collision between two series.
@Suite struct AggregatorShardTests {
    /// Two series whose kind and widget type digests both collide (SipHash under a random seed: not to be expected,
    /// nor forced, so the test plants one) are held apart: the newcomer takes the next probe, and its later events
    /// find it there, while the first series keeps its counts.
    @Test func seriesWhoseDigestsCollideStayApart() throws {
        let shard = AggregatorShard(softCap: 100)
        let version = VersionKey(client: RollupAggregatorTests.client)
        let event = RollupAggregatorTests.event("t1", second: 0, count: 2)
        let window = MinuteWindow(containing: event.occurredAt)
        let batch = AggregatorShard.Batch(
            version: version, capabilities: nil, decodes: 0, install: nil, receivedAt: event.occurredAt,
            skew: SkewShift(.zero), isClean: false)
        let impostor = RollupSeries(version: version, kind: .malformedPayload, widgetType: "impostor")
        shard.state.withLock { state in
            let slot = AggregatorShard.SeriesSlot(
                kindDigest: state.digests.digest(DiagnosticKind.unknownType.rawValue),
                typeDigest: state.digests.digest("t1"), window: window.start)
            var entry = AggregatorShard.VersionEntry()
            _ = entry.add(
                AggregatorShard.SeriesAccumulator(
                    rollup: SeriesRollup(
                        series: impostor, window: window, events: 5, firstSeen: event.occurredAt,
                        lastSeen: event.occurredAt)),
                at: slot)
            state.versions[version] = entry
            state.entryCount = 1
            #expect(state.record(EventTable([event, event]), batch: batch) == 0)
            #expect(state.record(EventTable([event]), batch: batch) == 0)
        }
        let (taken, names) = shard.state.withLock { $0.take() }
        let rollups = try #require(taken[version]).accumulators.map {
            $0.finishedRollup(names: names, version: version)
        }
        #expect(rollups.count == 2)
        let held = try #require(rollups.first { $0.series == impostor })
        #expect(held.events == 5)
        #expect(held.samples.isEmpty)
        let own = try #require(rollups.first { $0.series.widgetType == "t1" })
        #expect(own.series.kind == .unknownType)
        #expect(own.events == 6)
        #expect(own.samples.count == 1)
    }
}

extension AggregatorShard.SeriesAccumulator {
    /// An accumulator holding `rollup`'s counts (its samples are not carried over): a series planted by a test.
    init(rollup: SeriesRollup) {
        self.init(
            kind: rollup.series.kind, widgetType: rollup.series.widgetType, window: rollup.window,
            at: rollup.firstSeen)
        events = rollup.events
        lastSeen = rollup.lastSeen
        installs = rollup.installs
        releases = rollup.releases
    }
}
