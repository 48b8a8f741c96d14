import FlowmeterModels
import Foundation
import RollupStore
import Rollups
import TestSupport
import Testing

@testable import FlowmeterReporter

/// The SDK against the real collector: `flowmeter serve --kafka embedded` on loopback, its events topic read back
/// at the bootstrap servers it logs.
@Suite(.serialized) struct CollectorRoundTripTests {
    private func configuration(
        _ fixture: ReporterFixture, endpoint: URL, clock: (any ReporterClock)? = nil
    ) -> ReporterConfiguration {
        fixture.configuration(endpoint: endpoint, clock: clock, key: EmbeddedCollector.ingestKey)
    }

    private static func ids(_ events: [[String: Any]]) -> [String] {
        events.compactMap { $0["id"] as? String }
    }

    @Test func recordedOfflineThenFlushedOnceTheCollectorIsUp() async throws {
        let port = try ServerProcess.freeLoopbackPort()
        let fixture = try ReporterFixture()
        let clock = ManualClock()
        let reporter = try FlowmeterReporter(
            configuration: configuration(fixture, endpoint: URL(string: "http://127.0.0.1:\(port)")!, clock: clock))
        for index in 0..<20 { reporter.record(ReporterFixture.event(id: "offline-\(index)", at: Date())) }
        reporter.recordDecodes(2)
        let flush = startFlush(reporter)
        // Nothing listens yet: the first attempt has no answer, and the reporter backs off 2 s (the jitter is pinned
        // to its cap). No upload can be waited for, so the test waits for that deadline itself: a count of two can
        // be met by the flush's timeout and the loop's earlier wait toward the batch's seal deadline.
        let backoff = clock.now().addingTimeInterval(2)
        let retry = try await clock.sleepers(description: "sleeper until the 2 s backoff") { $0.contains(backoff) }
            .first { $0 == backoff }!
        #expect(fixture.batchFiles().count == 1)

        let collector = try await EmbeddedCollector(port: port)
        clock.advance(to: retry)
        #expect(await finished(flush) == .delivered)
        let events = try await collector.consumeEvents { Self.ids($0).filter { $0.hasPrefix("offline-") }.count >= 20 }
        #expect(Set(Self.ids(events)) == Set((0..<20).map { "offline-\($0)" }))
        #expect(fixture.batchFiles().isEmpty)
        await reporter.close()
    }

    @Test func aProcessKilledAfterRecordingHasItsEventsSentByTheNextOne() async throws {
        let fixture = try ReporterFixture()
        let bench = URL(fileURLWithPath: try FlowmeterExecutable.requiredPath()).deletingLastPathComponent()
            .appendingPathComponent("flowmeter-bench").path
        // The child records, waits the promised second, and dies by SIGKILL without close(); nothing listens on
        // its endpoint, and its first upload would only be due in an hour.
        let child = try await ChildProcess.run(
            bench,
            [
                "reporter-probe", "--directory", fixture.directory.path, "--endpoint", "http://127.0.0.1:9",
                "--events", "300", "--id-prefix", "killed", "--repeats", "40",
            ], timeout: .seconds(60))
        #expect(child.status == SIGKILL, "the probe died by SIGKILL: \(child.status) \(child.errors)")
        #expect(child.output.contains("recorded 300 events and 40 repeats"))
        #expect(!fixture.batchFiles().isEmpty)

        let collector = try await EmbeddedCollector()
        let reporter = try FlowmeterReporter(configuration: configuration(fixture, endpoint: collector.endpoint))
        #expect(await flushed(reporter) == .delivered)
        let events = try await collector.consumeEvents {
            Self.ids($0).filter { $0.hasPrefix("killed-") }.count >= 300
                && $0.contains { $0["widgetType"] as? String == "probe_repeat" }
        }
        #expect(Set(Self.ids(events).filter { $0.hasPrefix("killed-") }) == Set((0..<300).map { "killed-\($0)" }))
        let repeats = events.filter { $0["widgetType"] as? String == "probe_repeat" }
        #expect(repeats.count == 1, "the 40 identical events arrive as one")
        #expect(repeats.first?["count"] as? Int == 40)
        #expect(fixture.batchFiles().isEmpty)
        await reporter.close()
    }

    @Test func tenThousandEventsAreConsumedExactlyOnceOrReportedAsDuplicates() async throws {
        let collector = try await EmbeddedCollector()
        let fixture = try ReporterFixture()
        let reporter = try FlowmeterReporter(configuration: configuration(fixture, endpoint: collector.endpoint))
        let sent = (0..<10_000).map { "run-\($0)" }
        for (index, id) in sent.enumerated() {
            reporter.record(
                ReporterFixture.event(id: id, widgetType: "type_\(index % 40)", page: "p\(index % 7)", at: Date()))
            if index % 10 == 9 { reporter.recordDecodes(1) }
        }
        #expect(await flushed(reporter) == .delivered)
        let events = try await collector.consumeEvents(timeout: .seconds(90), settle: .seconds(2)) {
            $0.count >= sent.count
        }
        var seen: [String: Int] = [:]
        for id in Self.ids(events) { seen[id, default: 0] += 1 }
        let missing = sent.filter { seen[$0] == nil }
        let duplicates = seen.filter { $0.value > 1 }
        #expect(missing.isEmpty, "\(missing.count) of \(sent.count) never consumed, first \(missing.prefix(5))")
        // At-least-once (docs/reliability.md): a duplicate is allowed but must be seen and reported, never silent.
        if !duplicates.isEmpty {
            print("reporter 10,000-event run: \(duplicates.count) events consumed more than once (allowed, reported)")
        }
        #expect(seen.count == sent.count && Set(seen.keys) == Set(sent))
        #expect(events.allSatisfy { $0["count"] as? Int == 1 })
        await reporter.close()
    }

    @Test func whatTheSDKDroppedReachesMetricsAndTheVersionRollups() async throws {
        let directory = try TemporaryDirectory(prefix: "flowmeter-reporter-store")
        let storePath = directory.file("store.sqlite")
        let collector = try await EmbeddedCollector(extra: ["--store", storePath])
        let fixture = try ReporterFixture()
        var configuration = configuration(fixture, endpoint: collector.endpoint)
        configuration.batching.maxEventsPerDecode = 3
        let reporter = try FlowmeterReporter(configuration: configuration)
        for index in 0..<5 { reporter.record(ReporterFixture.event(id: "capped-\(index)", at: Date())) }
        reporter.recordDecodes(1)
        #expect(await flushed(reporter) == .delivered)
        let series = #"flowmeter_client_discarded_events_total{app_id="com.example.shop",reason="cap_exceeded"}"#
        #expect(try await collector.metric(series) == 2)

        // The sink merges the collector's version rollup into the store within a few rollup intervals.
        let store = try openRollupStore(url: storePath)
        var discarded: Int64 = 0
        for _ in 0..<60 where discarded < 2 {
            let now = Int64(Date().timeIntervalSince1970)
            discarded = try store.versionRollups(
                from: Timestamp(secondsSinceEpoch: now - 3_600), to: Timestamp(secondsSinceEpoch: now + 120),
                appID: "com.example.shop"
            ).reduce(0) { $0 + $1.clientDiscarded }
            if discarded < 2 { try await Task.sleep(for: .milliseconds(500)) }
        }
        #expect(discarded == 2)
        await reporter.close()
    }
}
