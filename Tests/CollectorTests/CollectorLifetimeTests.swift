import Collector
import FlowmeterModels
import Foundation
import Logging
import Rollups
import TestSupport
import Testing

/// A collector that is gone frees everything it made: its parts must not hold each other in a cycle.
///
/// Found by the ingest-request fuzz target's leak check (docs/fuzzing.md): the metrics registry's gauges held the
/// HTTP server, the producer and the rollup publisher, each of which holds the metrics, so no collector was ever freed.
@Suite struct CollectorLifetimeTests {
    private static func configuration() throws -> CollectorConfiguration {
        try CollectorFixture.configuration { $0.threads = 1 }
    }

    private static let silent = Logger(threshold: .error) { _ in }

    @Test(arguments: [false, true])
    func aCollectorThatWasNeverStartedIsFreed(withStore: Bool) throws {
        weak var made: Collector?
        weak var metrics: CollectorMetrics?
        do {
            let collector = try makeCollector(
                configuration: try Self.configuration(), logger: Self.silent, store: withStore ? MemoryStore() : nil)
            made = collector
            metrics = collector.metrics
            #expect(metrics != nil)
        }
        #expect(made == nil)
        #expect(metrics == nil, "the collector's metrics (and what they reach) outlive it")
    }

    @Test(arguments: [false, true])
    func aCollectorThatWasShutDownIsFreed(withStore: Bool) async throws {
        weak var made: Collector?
        weak var metrics: CollectorMetrics?
        do {
            let collector = try makeCollector(
                configuration: try Self.configuration(), logger: Self.silent, store: withStore ? MemoryStore() : nil)
            made = collector
            metrics = collector.metrics
            try collector.start()
            await collector.shutdown()
        }
        // Its threads (the deadline queue's, the rollup flusher's) notice the stop at their next tick and let go.
        _ = await eventually(every: .milliseconds(100)) { metrics == nil }
        #expect(made == nil)
        #expect(metrics == nil, "the collector's metrics (and what they reach) outlive it")
    }
}

/// The collector's store: the in-memory reference store.
private struct MemoryStore: CollectorStore {
    let store = InMemoryRollupStore()

    func apply(_ partials: [PartialRollup]) throws -> RollupApplyResult { try store.apply(partials) }
    func recordDeploy(_ deploy: DeployMarker) throws { try store.recordDeploy(deploy) }
    func recordWatermarks(_ watermarks: [CollectorWatermark]) throws { try store.recordWatermarks(watermarks) }
    func recordManifest(_ manifest: CapabilityManifest) throws { try store.recordManifest(manifest) }
}
