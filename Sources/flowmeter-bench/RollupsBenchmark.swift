import FlowmeterModels
import FlowmeterWire
import Foundation
import Metrics
import Rollups

/// `flowmeter-bench rollups [--seconds N] [--batches N] [--drain-every N] [--only distinct|repeated] [--events N]`: nanoseconds per event of the collector's
/// rollup aggregation alone (`RollupAggregator.record`, then `drain`), on one thread, for the ingest benchmark's
/// distinct batches and for its one repeated batch.
///
/// The batches are decoded once, as the collector decodes them (one shared interner), and recorded again and again
/// with the collector's arguments: the install pseudonym, the clock skew that moves `sentAt` to the time of
/// receipt, and a counter per series. The time of receipt advances by a second every 250,000 events and the
/// aggregator is drained every `--drain-every` events (default 1,250,000: five seconds, the default rollup
/// interval, at that rate), so it holds as many series between drains as the collector does under the ingest
/// benchmark's load, and a run under valgrind records the same windows as one at full speed.
enum RollupsBenchmark {
    static func run(_ arguments: [String]) -> Int32 {
        var seconds = 5.0
        var batchCount = 512
        var drainEvery = 1_250_000
        var only: String?
        var eventLimit = Int.max
        var shards = RollupAggregator.Configuration(collectorID: "bench").shardCount
        var index = 0
        while index < arguments.count {
            let value = index + 1 < arguments.count ? arguments[index + 1] : ""
            switch arguments[index] {
            case "--seconds": seconds = Double(value) ?? seconds
            case "--batches": batchCount = Int(value) ?? batchCount
            case "--drain-every": drainEvery = Int(value) ?? drainEvery
            case "--events": eventLimit = Int(value) ?? 0
            case "--shards": shards = Int(value) ?? 0
            case "--only" where value == "distinct" || value == "repeated": only = value
            default:
                print(
                    """
                    usage: flowmeter-bench rollups [--seconds N (5)] [--batches N (512)] [--drain-every N (1250000)]
                                                   [--only distinct|repeated] [--events N (stop after N, for valgrind)]
                                                   [--shards N (the aggregator's default)]
                    """)
                return 2
            }
            index += 2
        }
        guard seconds > 0, batchCount > 0, drainEvery > 0, eventLimit > 0, shards > 0 else {
            print("error: --seconds, --batches, --drain-every, --events and --shards must be positive")
            return 2
        }
        let inputs: [Input]
        do {
            inputs = try decode(SyntheticBatches.batches(count: batchCount, seed: 42))
        } catch {
            print("error: a synthetic batch did not decode: \(error)")
            return 1
        }
        print("rollups: \(batchCount) distinct batches of 50 events; drained every \(drainEvery) events")
        print("time: \(seconds) s a row, or until --events")
        let rows = [("distinct", inputs), ("repeated", Array(inputs.prefix(1)))].filter { only ?? $0.0 == $0.0 }
        for (label, rows) in rows {
            let run = measure(
                rows, seconds: seconds, drainEvery: drainEvery, eventLimit: eventLimit, shards: shards)
            print(
                String(
                    format:
                        "%-9@ %8.1f ns/event  %10.0f events/s  %7d rollups in the largest drain  %d events, %d drains",
                    label as NSString, run.nanosecondsPerEvent, 1e9 / run.nanosecondsPerEvent, run.largestDrain,
                    run.events, run.drains))
        }
        return 0
    }

    /// One decoded batch and what the collector passes with it.
    struct Input {
        var table: EventTable
        var client: ClientInfo
        var decodes: Int?
        var installHash: String?
        var sentAt: Timestamp?
    }

    static func decode(_ bodies: [[UInt8]]) throws -> [Input] {
        // As large as the collector's (InternerPool), so a value repeated across batches is one string there too.
        var interner = StringInterner(slots: 1_024)
        return try bodies.map { body in
            let decoded = try FastBatchDecoder.decodeCompact(body, interner: &interner)
            let header = decoded.header
            return Input(
                table: decoded.table, client: header.client, decodes: header.decodes,
                installHash: header.client.installID.map(pseudonym), sentAt: header.sentAt)
        }
    }

    /// What one row measured.
    struct Run {
        var nanosecondsPerEvent: Double
        /// The partial rollups (series and app builds) of the largest drain.
        var largestDrain: Int
        var events: Int
        var drains: Int
    }

    /// A stand-in for the collector's install pseudonym: 16 hex digits, the part of one `HyperLogLog` reads (any
    /// shorter string would take its slower hash path instead).
    static func pseudonym(_ installID: String) -> String {
        let hex = String(UInt64(truncatingIfNeeded: installID.hashValue), radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// Records `rows` round after round for `seconds` (or until `eventLimit` events), drains included in the time.
    static func measure(_ rows: [Input], seconds: Double, drainEvery: Int, eventLimit: Int, shards: Int) -> Run {
        let aggregator = RollupAggregator(configuration: .init(collectorID: "bench", shardCount: shards))
        let counters = BenchCounters()
        let clock = ContinuousClock()
        let start = clock.now
        let deadline = start.advanced(by: .milliseconds(Int(seconds * 1000)))
        var events = 0
        var sinceDrain = 0
        var largestDrain = 0
        var drains = 0
        // The time of receipt advances with the events recorded, at the rate the drains assume, not with the clock:
        // the windows, and so the series, are then the same however fast the run (under valgrind too). It starts
        // on a whole minute, so the minute boundaries fall at the same events in every run: two runs under valgrind
        // record the same series and count the same instructions (with SWIFT_DETERMINISTIC_HASHING=1).
        let now = Timestamp(Date()).secondsSinceEpoch
        let startedAt = Timestamp(secondsSinceEpoch: now - now % 60, nanoseconds: 0)
        repeat {
            let receivedAt = Timestamp(
                secondsSinceEpoch: startedAt.secondsSinceEpoch + Int64(events / eventsPerSecond), nanoseconds: 0)
            for row in rows {
                let skew = row.sentAt.map { Self.duration(from: $0, to: receivedAt) } ?? .zero
                aggregator.record(
                    row.table, client: row.client, decodes: row.decodes, installHash: row.installHash,
                    receivedAt: receivedAt, clockSkew: skew, counters: counters)
                events += row.table.count
                sinceDrain += row.table.count
                if sinceDrain >= drainEvery {
                    largestDrain = max(largestDrain, aggregator.drain().count)
                    drains += 1
                    sinceDrain = 0
                }
            }
        } while events < eventLimit && clock.now < deadline
        largestDrain = max(largestDrain, aggregator.drain().count)
        drains += 1
        let elapsed = clock.now - start
        let nanoseconds = Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9
        return Run(
            nanosecondsPerEvent: nanoseconds / Double(max(1, events)), largestDrain: largestDrain, events: events,
            drains: drains)
    }

    /// The load the drains and the time of receipt assume: about the collector's under the ingest benchmark.
    static let eventsPerSecond = 250_000

    static func duration(from start: Timestamp, to end: Timestamp) -> Duration {
        .seconds(end.secondsSinceEpoch &- start.secondsSinceEpoch)
            + .nanoseconds(Int64(end.nanoseconds) - Int64(start.nanoseconds))
    }

    /// A counter per app, build, kind and widget type, as the collector's diagnostics metric keeps them.
    final class BenchCounters: SeriesCounterSource, @unchecked Sendable {
        let family = MetricsRegistry().counter(
            "flowmeter_bench_events_total", help: "Events.", labelNames: ["app", "build", "kind", "type"],
            maxChildren: 100_000)

        func counter(appID: String, build: BuildConfiguration, kind: DiagnosticKind, widgetType: String?) -> Counter {
            family.labels(appID, build.rawValue, kind.rawValue, widgetType ?? "")
        }
    }
}
