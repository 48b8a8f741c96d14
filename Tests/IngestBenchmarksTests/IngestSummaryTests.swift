import IngestBenchmarks
import Testing

@Suite struct IngestSummaryTests {
    static let plain32 = IngestCell(ack: "delivered", connections: 32, encoding: "plain", batches: "distinct")
    static let gzip32 = IngestCell(ack: "delivered", connections: 32, encoding: "gzip", batches: "distinct")

    /// `events` accepted over `cpuSeconds`, 1,000 requests, one second.
    static func measurement(
        _ target: String, _ cell: IngestCell, round: Int, events: Int, cpuSeconds: Double, rss: Double = 100,
        switches: ContextSwitches = ContextSwitches(voluntary: 2_000, involuntary: 500)
    ) -> IngestMeasurement {
        IngestMeasurement(
            target: target, cell: cell, round: round, requests: 1_000, events: events, elapsed: 1,
            cpuSeconds: cpuSeconds, p50Millis: Double(round), p99Millis: Double(10 * round), peakRSSMiB: rss,
            contextSwitches: switches, threads: 4 + round, statusCounts: [202: 1_000])
    }

    @Test func medianOfOddAndEvenCounts() {
        #expect([3.0, 1, 2].median == 2)
        #expect([4.0, 1, 3, 2].median == 2.5)
        #expect([Double]().median == 0)
    }

    @Test func ratioIsTheMedianOfRoundByRoundRatios() throws {
        // Round ratios 2.0, 4.0, 3.0: their median is 3.0, while the ratio of the medians would be 100k ÷ 40k = 2.5.
        let measurements = [
            Self.measurement("flowmeter", Self.plain32, round: 1, events: 100_000, cpuSeconds: 1),
            Self.measurement("python-peer", Self.plain32, round: 1, events: 50_000, cpuSeconds: 1),
            Self.measurement("flowmeter", Self.plain32, round: 2, events: 160_000, cpuSeconds: 1),
            Self.measurement("python-peer", Self.plain32, round: 2, events: 40_000, cpuSeconds: 1),
            Self.measurement("flowmeter", Self.plain32, round: 3, events: 90_000, cpuSeconds: 1),
            Self.measurement("python-peer", Self.plain32, round: 3, events: 30_000, cpuSeconds: 1),
        ]
        let summary = IngestSummary(measurements: measurements.shuffled())
        let pair = try #require(summary.pairs.first)
        #expect(summary.pairs.count == 1)
        #expect(pair.roundRatios == [2, 4, 3])
        #expect(pair.ratio == 3)
        #expect(pair.target.eventsPerCPUSecond == 100_000)
        #expect(pair.baseline?.eventsPerCPUSecond == 40_000)
        #expect(pair.target.threads == 7)
        #expect(pair.target.coreShare == 1)
        #expect(pair.target.p99Millis == 20)
        #expect(pair.target.voluntarySwitchesPerRequest == 2)
        #expect(pair.target.involuntarySwitchesPerRequest == 0.5)
        #expect(pair.target.statusCounts == [202: 3_000])
    }

    @Test func pairsOnlyTheSameCell() throws {
        let enqueue = IngestCell(ack: "enqueue", connections: 32, encoding: "plain", batches: "distinct")
        let summary = IngestSummary(measurements: [
            Self.measurement("flowmeter", Self.plain32, round: 1, events: 100_000, cpuSeconds: 1),
            Self.measurement("python-peer", enqueue, round: 1, events: 50_000, cpuSeconds: 1),
        ])
        let pair = try #require(summary.pairs.first)
        #expect(pair.baseline == nil)
        #expect(pair.ratio == nil)
        #expect(summary.rows.count == 2)
    }

    @Test func verdictsPassFailAndNotMeasured() {
        let measurements = [
            Self.measurement("flowmeter", Self.plain32, round: 1, events: 310_000, cpuSeconds: 1),
            Self.measurement("python-peer", Self.plain32, round: 1, events: 100_000, cpuSeconds: 1),
            Self.measurement("flowmeter", Self.gzip32, round: 1, events: 240_000, cpuSeconds: 1, rss: 300),
            Self.measurement("python-peer", Self.gzip32, round: 1, events: 100_000, cpuSeconds: 1),
        ]
        let verdicts = IngestSummary(measurements: measurements).verdicts()
        let marks = Dictionary(uniqueKeysWithValues: verdicts.map { ($0.goal, $0.passed) })
        #expect(verdicts.count == 5)
        #expect(marks.first { $0.key.hasPrefix("delivered 32 plain distinct") }?.value == true)
        #expect(marks.first { $0.key.hasPrefix("delivered 32 gzip distinct") }?.value == false)
        #expect(marks.first { $0.key.hasPrefix("delivered 32 plain repeated") }?.value == .some(nil))
        // 300 MiB in the gzip row fails the RSS goal, and the verdict line says FAIL, not INCOMPLETE.
        #expect(verdicts.last?.passed == false)
        #expect(IngestSummary.verdictLines(verdicts).last?.hasPrefix("verdict: FAIL (2 of 5") == true)
    }

    @Test func rssGoalCountsTheExtraRows() {
        let measurements = [Self.measurement("flowmeter", Self.plain32, round: 1, events: 1, cpuSeconds: 1, rss: 100)]
        let summary = IngestSummary(measurements: measurements)
        #expect(summary.verdicts().last?.passed == true)
        #expect(summary.verdicts(extraRSS: [("spool row", 256)]).last?.passed == false)
    }

    @Test func matrixOrdersAckThenConnectionsThenEncodingThenBatches() {
        let cells = IngestCell.matrix(
            acks: ["delivered", "enqueue"], connections: [32, 128], encodings: ["plain", "gzip"],
            batches: ["distinct", "repeated"])
        #expect(cells.count == 16)
        #expect(cells.first == Self.plain32)
        #expect(cells[1].batches == "repeated")
        #expect(cells[2].encoding == "gzip")
        #expect(cells[4].connections == 128)
        #expect(cells[8].ack == "enqueue")
        #expect(cells == cells.sorted())
    }

    @Test func tablesRenderEveryPairAndRow() {
        let summary = IngestSummary(measurements: [
            Self.measurement("flowmeter", Self.plain32, round: 1, events: 150_000, cpuSeconds: 1),
            Self.measurement("python-peer", Self.plain32, round: 1, events: 100_000, cpuSeconds: 1),
        ])
        let markdown = summary.ratioTable.markdown
        #expect(markdown.count == 3)
        #expect(markdown[2] == "| delivered | 32 | plain | distinct | 150000 | 100000 | 1.50× | 1.50 |")
        #expect(summary.rowTable.text.count == 3)
        #expect(summary.rowTable.markdown[2].hasPrefix("| flowmeter | delivered | 32 | plain | distinct | 150000 |"))
    }
}
