import FlowmeterModels
import Metrics
import Synchronization
import TestSupport
import Testing

@testable import Rollups

/// The aggregator counts every recorded event in its ``SeriesCounterSource``: by the event's own app, build, kind
/// and widget type, once, whether it lands in its own series, the overflow series, or nowhere (every cap hit).
@Suite struct SeriesCounterSourceTests {
    /// Counters by app, build, kind and raw widget type, counting how often each was asked for.
    final class Source: SeriesCounterSource {
        let family = MetricsRegistry().counter(
            "flowmeter_test_events_total", help: "test", labelNames: ["app", "build", "kind", "type"],
            maxChildren: 100_000)
        let lookups = Mutex(0)

        func counter(appID: String, build: BuildConfiguration, kind: DiagnosticKind, widgetType: String?) -> Counter {
            lookups.withLock { $0 += 1 }
            return family.labels(appID, build.rawValue, kind.rawValue, widgetType ?? "<nil>")
        }

        func value(_ appID: String, _ kind: DiagnosticKind, _ widgetType: String?) -> UInt64 {
            family.labels(appID, "release", kind.rawValue, widgetType ?? "<nil>").value
        }
    }

    private static func event(_ kind: DiagnosticKind, _ type: String?, second: Int64, count: Int) -> DiagnosticEvent {
        DiagnosticEvent(
            kind: kind, widgetType: type, codingPath: "sections.Index 1", message: "m", count: count,
            occurredAt: Timestamp(secondsSinceEpoch: RollupAggregatorTests.base + second))
    }

    /// Caps far below the batch's series: every event is counted under its own labels, including the types that
    /// share the overflow series, a type named like the overflow series, and events without a type or with an
    /// empty one.
    @Test func everyEventIsCountedUnderItsOwnLabelsWhateverTheCaps() {
        for maxEntries in [4, 16, 10_000] {
            let aggregator = RollupAggregator(
                configuration: .init(collectorID: "c", shardCount: 1, maxEntries: maxEntries))
            let source = Source()
            var random = SeededGenerator(seed: UInt64(maxEntries))
            var expected: [String: UInt64] = [:]
            let types: [String?] = (0..<30).map { "t\($0)" } + [nil, "", RollupAggregator.overflowLabel]
            let kinds: [DiagnosticKind] = [.unknownType, .malformedPayload]
            for _ in 0..<20 {
                let batch = (0..<50).map { _ in
                    Self.event(
                        kinds[Int(random.next() % 2)], types[Int(random.next() % UInt64(types.count))],
                        second: Int64(random.next() % 300), count: Int(random.next() % 3 + 1))
                }
                for event in batch {
                    expected["\(event.kind.rawValue)|\(event.widgetType ?? "<nil>")", default: 0] += UInt64(event.count)
                }
                aggregator.record(
                    batch, client: RollupAggregatorTests.client, decodes: nil, installHash: nil,
                    receivedAt: Timestamp(secondsSinceEpoch: RollupAggregatorTests.base), counters: source)
            }
            for kind in kinds {
                for type in types {
                    #expect(
                        source.value("com.example.shop", kind, type)
                            == expected["\(kind.rawValue)|\(type ?? "<nil>")", default: 0],
                        "maxEntries \(maxEntries), \(kind.rawValue) \(type ?? "<nil>")")
                }
            }
        }
    }

    /// With room for every series, a counter is asked for once per series and minute, not per event.
    @Test func aSeriesAsksForItsCounterOncePerMinute() {
        let aggregator = RollupAggregator(configuration: .init(collectorID: "c", shardCount: 2))
        let source = Source()
        let batch = (0..<200).map { Self.event(.unknownType, "t\($0 % 5)", second: Int64($0 % 2) * 60, count: 1) }
        for _ in 0..<3 {
            aggregator.record(
                batch, client: RollupAggregatorTests.client, decodes: nil, installHash: nil,
                receivedAt: Timestamp(secondsSinceEpoch: RollupAggregatorTests.base), counters: source)
        }
        #expect(source.lookups.withLock { $0 } == 10)
        #expect(source.value("com.example.shop", .unknownType, "t0") == 120)
    }
}
