import Detector
import FlowmeterModels
import Foundation
import RollupStore
import Rollups
import Sink
import TestSupport
import Testing

@testable import FlowmeterCLI

/// The demo's world at other times of day: its seeded history and its simulated hours, built straight into a store
/// by the sink's own steps (no collector, no Kafka), then judged by the spike detector over 29 days, as
/// `flowmeter spikes --since 29d` would after the demo.
///
/// The history's hourly draws and its daily rhythm depend on the end time, so a demo run at 01:00 and one at 15:00
/// see different backgrounds: this is how a false incident that appeared only at some times of day (the history
/// judged as Poisson counts when a report's window reached back to the store's first data; docs/detector.md) was
/// found and is held off. Each end time takes a few seconds.
@Suite struct DemoSweepTests {
    static let planted = [
        "hologram_projector unknownType", "imgae_text_card unknownType", "image_text_card malformedPayload",
    ]

    @Test(arguments: 0..<6)
    func onlyThePlantedCausesAtAnyTimeOfDay(slot: Int) throws {
        // Six end times 4 h 1 min apart, from a fixed instant: every phase of the day, the same ones every run.
        try judge(end: 1_796_515_200 - Int64(slot) * (4 * 3600 + 60), requests: 3000)
    }

    /// End times at which DemoTests (the demo's 10,000 requests) found a false incident: 2026-12-06T08:51Z, where
    /// `com.example.travel` title_block malformed payloads, 5 in a night bucket from two installs, were judged
    /// against a level of 0.1 because nothing came before the window to give the series its long-run rate
    /// (docs/detector.md, "Reports whose window reaches back to the store's first data").
    @Test(arguments: [1_796_547_060 as Int64])
    func onlyThePlantedCausesAtAnEndTimeThatOnceFailed(end: Int64) throws {
        try judge(end: end, requests: 10_000)
    }

    private func judge(end: Int64, requests: Int) throws {
        let directory = try TemporaryDirectory(prefix: "flowmeter-demo-sweep")
        defer { directory.remove() }
        let store = try openRollupStore(
            url: directory.file("sweep.sqlite"), options: RollupStoreOptions())
        let scenario = TrafficScenario(seed: 2026, end: end, simulatedSeconds: 4 * 3600, batchCount: requests, runID: 0)
        let history = SeededHistory(scenario: scenario, days: 14, salt: Array("demo-sweep-salt-0123".utf8))
        var batches = history.batches()
        for index in 0..<requests {
            // The simulated hours arrive in the 50 s after `end`, as the demo sends them.
            batches.append(
                SeededHistory.Batch(
                    batch: scenario.batch(at: index).batch, receivedAt: end + Int64(50 * index / requests)))
        }
        let records = history.records(
            of: batches, topic: "flowmeter.batches.v1", collector: "sweep", maxRecordBytes: 1 << 20)
        let steps = PartitionSteps(
            topic: "flowmeter.batches.v1", store: store, horizon: .seconds(3600), maxEntries: 2_000_000)
        var offset: Int64 = 0
        for chunk in stride(from: 0, to: records.count, by: 1000) {
            let part = records[chunk..<min(chunk + 1000, records.count)].map { record -> (Int64, [UInt8]) in
                defer { offset += 1 }
                return (offset, record.value)
            }
            let made = try steps.makeStep(partition: 0, partitions: 1, records: part, caughtUpAt: nil)
            #expect(made.bad.isEmpty)
            try steps.commit(made.step)
        }
        for deploy in scenario.deploys {
            let finished = scenario.finishedAt(deploy)
            try store.recordDeploy(
                DeployMarker(
                    service: deploy.service, version: deploy.version, environment: "production",
                    startedAt: Timestamp(secondsSinceEpoch: finished - 240),
                    finishedAt: Timestamp(secondsSinceEpoch: finished)))
        }

        let report = try SpikeDetector().report(
            reader: store, from: Timestamp(secondsSinceEpoch: end - 29 * 86_400),
            to: Timestamp(secondsSinceEpoch: end + 120))
        let found = report.incidents.map { "\($0.widgetType) \($0.kind.rawValue)" }
        let unplanted = found.filter { !Self.planted.contains($0) }
        #expect(unplanted.isEmpty, "end \(Timestamp(secondsSinceEpoch: end).rfc3339String): \(report.incidents)")
        for cause in Self.planted {
            #expect(found.contains(cause), "end \(Timestamp(secondsSinceEpoch: end).rfc3339String): \(found)")
        }
    }
}
