import Foundation
import TestSupport
import Testing

/// `make bench-rollups`: `flowmeter-bench rollups` records both batch sets into the aggregator and drains it as told.
@Suite("bench-rollups")
struct RollupsBenchmarkTests {
    @Test("a bounded run records both rows, drains on schedule and reports what it held")
    func boundedRun() async throws {
        let run = try await ChildProcess.run(
            try InstructionsBenchmarkTests.benchExecutable(),
            ["rollups", "--events", "20000", "--batches", "16", "--drain-every", "5000", "--seconds", "60"],
            timeout: .seconds(120))
        #expect(run.status == 0, "\(run.output)\n\(run.errors)")
        for label in ["distinct", "repeated"] {
            let line = try #require(run.output.split(separator: "\n").first { $0.hasPrefix(label + " ") })
            // 16 batches of 50 events: the run stops at the first round past 20,000 events.
            #expect(line.contains("20000 events, 5 drains"), "\(line)")
            let fields = line.split(separator: " ")
            let nanoseconds = try #require(Double(fields[1]))
            #expect(nanoseconds > 0)
            let rollups = try #require(fields.firstIndex(of: "rollups").map { Int(fields[$0 - 1]) } ?? nil)
            #expect(rollups > 0)
        }
    }

    @Test("an unknown option prints the usage and exits 2")
    func unknownOption() async throws {
        let run = try await ChildProcess.run(
            try InstructionsBenchmarkTests.benchExecutable(), ["rollups", "--frobnicate", "1"], timeout: .seconds(60))
        #expect(run.status == 2)
        #expect(run.output.contains("usage: flowmeter-bench rollups"))
    }
}
