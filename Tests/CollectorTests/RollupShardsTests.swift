import Testing

@testable import Collector

/// The rollup aggregator's shards follow the HTTP threads: two per thread, within 4 and 16.
@Suite struct RollupShardsTests {
    @Test func twoPerThreadWithinFourAndSixteen() {
        #expect(Collector.rollupShards(threads: 1) == 4)
        #expect(Collector.rollupShards(threads: 2) == 4)
        #expect(Collector.rollupShards(threads: 3) == 6)
        #expect(Collector.rollupShards(threads: 8) == 16)
        #expect(Collector.rollupShards(threads: 64) == 16)
    }
}
