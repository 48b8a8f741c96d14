import FlowmeterModels
import Foundation
import RollupStore
import Rollups
import Testing

/// Every query says how fresh the store is: a footer line and a `freshness` key; `ungated` and `check` warn when the
/// window they read is missing a collector that is behind (a sink down, its partitions not yet taken over).
@Suite struct FreshnessOutputTests {
    /// Watermarks relative to the real clock (the commands judge against it): collector-a current on both
    /// partitions, collector-b's partition 1 three minutes behind (its sink is down), collector-c stopped two hours
    /// ago, collector-d last heard an hour ago and never stopped (gone).
    private static func recordWatermarks(in path: String) throws {
        let now = Int64(Date().timeIntervalSince1970)
        func mark(_ collector: String, _ partition: Int, ago: Int64, stopped: Bool = false) -> CollectorWatermark {
            CollectorWatermark(
                collector: collector, partition: partition, partitions: 2,
                completeUpTo: Timestamp(secondsSinceEpoch: now - ago), isStopped: stopped)
        }
        try openRollupStore(url: path).recordWatermarks([
            mark("collector-a", 0, ago: 4), mark("collector-a", 1, ago: 6),
            mark("collector-b", 0, ago: 5), mark("collector-b", 1, ago: 190),
            mark("collector-c", 0, ago: 7_200, stopped: true), mark("collector-c", 1, ago: 7_200, stopped: true),
            mark("collector-d", 0, ago: 3_600), mark("collector-d", 1, ago: 3_600),
        ])
    }

    @Test func ungatedOverAWindowACollectorIsBehindOnWarnsAndSaysWhoInTextAndJSON() async throws {
        let store = try SeededStore()
        try Self.recordWatermarks(in: store.path)
        let json = await CLI.run(["ungated", "--since", "1h", "--store", store.path, "--format", "json"])
        #expect(json.status == 0, "\(json.standardError)")
        #expect(json.standardError.contains("warning: the window ends at"))
        #expect(json.standardError.contains("(behind: collector-b)"))
        let freshness = try #require(try CLI.json(json)["freshness"] as? [String: Any])
        #expect(freshness["windowComplete"] as? Bool == false)
        let collectors = try #require(freshness["collectors"] as? [[String: Any]])
        #expect(
            collectors.map { $0["collector"] as? String } == [
                "collector-a", "collector-b", "collector-c", "collector-d",
            ])
        #expect(collectors.map { $0["status"] as? String } == ["current", "behind", "stopped", "gone"])
        let lag = try #require(collectors[1]["lagSeconds"] as? Int)
        #expect(lag >= 190 && lag < 240)
        #expect(collectors[1]["partitionsReported"] as? Int == 2)
        // Complete up to collector-b's lagging partition.
        let complete = try #require((freshness["completeUpTo"] as? String).flatMap { Timestamp(rfc3339: $0) })
        #expect(Int64(Date().timeIntervalSince1970) - complete.secondsSinceEpoch >= 190)

        let table = await CLI.run(["ungated", "--since", "1h", "--store", store.path])
        // The footer wraps at 80 columns; unwrapped it is one line.
        let footer = try #require(
            table.standardOutput.replacingOccurrences(of: "\n  ", with: " ").split(separator: "\n").last
                .map(String.init))
        #expect(footer.hasPrefix("data complete up to "))
        #expect(
            footer.contains(
                " UTC; 1 of 2 partitions of collector-b 3 min behind, 2 partitions of collector-a current, collector-c "
                    + "stopped, collector-d gone (last heard "))
        #expect(collectors[1]["partitionsBehind"] as? Int == 1)
        #expect(table.standardOutput.split(separator: "\n").allSatisfy { $0.count <= 80 })
    }

    @Test func theSinksPartitionsAreWhatTheFooterCounts() async throws {
        let store = try SeededStore()
        let now = Int64(Date().timeIntervalSince1970)
        let rollups = try openRollupStore(url: store.path)
        for (partition, ago) in [(0, 3), (1, 5), (2, 4)] {
            try rollups.commit(
                PartitionStep(
                    topic: "flowmeter.batches.v1", partition: partition, partitions: 3, startOffset: nil,
                    nextOffset: 10,
                    series: [], versions: [], counted: [], forgetBefore: 0,
                    completeUpTo: Timestamp(secondsSinceEpoch: now - Int64(ago))))
        }
        let table = await CLI.run(["top"] + store.window)
        #expect(
            table.standardOutput.replacingOccurrences(of: "\n  ", with: " ")
                .contains(" UTC; 3 partitions of flowmeter.batches.v1 current"), "\(table.standardOutput)")
        // One partition's sink stops: that partition falls behind.
        try rollups.commit(
            PartitionStep(
                topic: "flowmeter.batches.v1", partition: 1, partitions: 3, startOffset: 10, nextOffset: 12,
                series: [], versions: [], counted: [], forgetBefore: 0,
                completeUpTo: Timestamp(secondsSinceEpoch: now - 600)))
        let behind = await CLI.run(["top"] + store.window)
        #expect(
            behind.standardOutput.replacingOccurrences(of: "\n  ", with: " ")
                .contains(" UTC; 1 of 3 partitions of flowmeter.batches.v1 10 min behind"), "\(behind.standardOutput)")
    }

    @Test func aWindowThatEndedBeforeTheLaggingPointIsCompleteAndUnwarned() async throws {
        let store = try SeededStore()
        try Self.recordWatermarks(in: store.path)
        for command in [["ungated"], ["top"], ["spikes"], ["versions"], ["types"], ["gates"]] {
            let result = await CLI.run(command + store.window + ["--format", "json"])
            #expect(!result.standardError.contains("warning"), "\(command): \(result.standardError)")
            let freshness = try #require(try CLI.json(result)["freshness"] as? [String: Any], "\(command)")
            #expect(freshness["windowComplete"] as? Bool == true, "\(command)")
            let table = await CLI.run(command + store.window)
            #expect(table.standardOutput.contains("data complete up to "), "\(command): \(table.standardOutput)")
        }
    }

    @Test func checkWarnsWhenItsWindowIsIncomplete() async throws {
        let store = try SeededStore()
        try Self.recordWatermarks(in: store.path)
        let payload = try CLI.fixture("page-safe.json")
        let result = await CLI.run(["check", payload, "--since", "1h", "--store", store.path])
        #expect(result.standardError.contains("warning: the window ends at"))
        #expect(
            result.standardOutput.replacingOccurrences(of: "\n  ", with: " ")
                .contains("1 of 2 partitions of collector-b 3 min behind"))
    }

    @Test func theReportSaysHowFreshTheStoreIsInEveryFormat() async throws {
        let store = try SeededStore()
        try Self.recordWatermarks(in: store.path)
        // The report writes to standard output or to --output; the test reads the files.
        func report(_ format: String) async throws -> String {
            let path = store.directory.file("report.\(format)")
            let result = await CLI.run([
                "report", "--week", "2026-W49", "--store", store.path, "--format", format, "--output", path,
            ])
            #expect(result.status == 0, "\(result.standardError)")
            return try String(contentsOfFile: path, encoding: .utf8)
        }
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(try await report("json").utf8)) as? [String: Any])
        let freshness = try #require(json["freshness"] as? [String: Any])
        #expect((freshness["collectors"] as? [Any])?.count == 4)
        #expect(try await report("md").contains("_data complete up to "))
        #expect(try await report("html").contains("<br>data complete up to "))
    }

    @Test func aStoreWithoutWatermarksSaysFreshnessIsUnknown() async throws {
        let store = try SeededStore()
        let result = await CLI.run(["top"] + store.window)
        #expect(
            result.standardOutput.hasSuffix(
                "freshness unknown: no partition of the batches topic counted in the store yet\n"))
        let json = try CLI.json(await CLI.run(["top", "--format", "json"] + store.window))
        let freshness = try #require(json["freshness"] as? [String: Any])
        #expect(freshness["completeUpTo"] is NSNull)
        #expect(freshness["windowComplete"] as? Bool == true)
        #expect((freshness["collectors"] as? [Any])?.isEmpty == true)
    }

    @Test func aPrunedStoreAnswersFromHoursAndSaysSo() async throws {
        let store = try SeededStore()
        let before = try CLI.json(await CLI.run(["top", "--format", "json"] + store.window))
        let pruned = await CLI.run([
            "store", "prune", "--store", store.path, "--keep-minutes", "1h", "--keep-hours", "30d", "--format", "json",
        ])
        #expect(pruned.status == 0, "\(pruned.standardError)")
        let report = try CLI.json(pruned)
        #expect((report["minuteRows"] as? Int ?? 0) > 0)
        #expect(report["hourRows"] as? Int == 0)

        let after = await CLI.run(["top", "--format", "json"] + store.window)
        let json = try CLI.json(after)
        // The window is whole hours: the hour rows hold every event the minutes did.
        #expect(
            (json["top"] as? [[String: Any]])?.map { $0["events"] as? Int }
                == (before["top"] as? [[String: Any]])?.map { $0["events"] as? Int })
        let retention = try #require((json["freshness"] as? [String: Any])?["retention"] as? [String: Any])
        #expect(retention["coarsened"] as? Bool == true)
        #expect(retention["truncated"] as? Bool == false)
        #expect(retention["minutesBefore"] is String && retention["hoursBefore"] is NSNull)
        let table = await CLI.run(["top"] + store.window)
        #expect(table.standardOutput.contains("retention: minutes before "))
        #expect(
            table.standardOutput.replacingOccurrences(of: "\n  ", with: " ")
                .contains("are kept only as hours: this window reads hourly rows there"))

        let stats = await CLI.run(["store", "stats", "--store", store.path, "--format", "json"])
        #expect(stats.status == 0)
        let tables = try #require(try CLI.json(stats)["tables"] as? [[String: Any]])
        let minutes = try #require(tables.first { $0["name"] as? String == "series_minutes" })
        #expect(minutes["rows"] as? Int == 0)
        let hours = try #require(tables.first { $0["name"] as? String == "series_hours" })
        #expect((hours["rows"] as? Int ?? 0) > 0)
        #expect(hours["oldestWindow"] as? String == "2026-11-30T05:00:00Z")
        let text = await CLI.run(["store", "stats", "--store", store.path])
        #expect(text.standardOutput.contains("series_hours"))
        #expect(text.standardOutput.contains("free pages are returned as retention prunes"))
        #expect(text.standardOutput.split(separator: "\n").allSatisfy { $0.count <= 80 })
    }

    @Test func retentionOptionsAreCheckedAsUsage() async {
        let result = await CLI.run(["store", "prune", "--keep-minutes", "30d", "--keep-hours", "7d"])
        #expect(result.status == 2)
        #expect(result.standardError.contains("hour rows must be kept at least as long as minute rows"))
        #expect(await CLI.run(["store", "stats", "--format", "csv"]).status == 2)
    }
}
