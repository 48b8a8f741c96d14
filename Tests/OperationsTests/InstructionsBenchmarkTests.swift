import Foundation
import TestSupport
import Testing

/// `make bench-instructions`: the `flowmeter-bench instructions` run outside Valgrind, and the stage table of
/// `scripts/bench-instructions.py` over a small hand-written callgrind dump whose figures are known.
@Suite("bench-instructions")
struct InstructionsBenchmarkTests {
    /// The `flowmeter-bench` executable built next to the test bundle.
    static func benchExecutable() throws -> String {
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let candidates = [
            bundle.appendingPathComponent("flowmeter-bench"),
            bundle.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("flowmeter-bench"),
        ]
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            throw ChildProcess.Failure("no flowmeter-bench next to the test bundle: run swift build first")
        }
        return found.path
    }

    /// The JSON of the `instructions-result` line the subcommand prints.
    static func result(in output: String) throws -> [String: Any] {
        let line = try #require(output.split(separator: "\n").first { $0.hasPrefix("instructions-result ") })
        let json = line.dropFirst("instructions-result ".count)
        return try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
    }

    @Test("50 requests go through the real collector into the mock cluster, every event accepted and delivered")
    func deliveredRun() async throws {
        let run = try await ChildProcess.run(
            try Self.benchExecutable(), ["instructions", "--requests", "50", "--warmup", "10", "--batches", "16"],
            timeout: .seconds(240))
        #expect(run.status == 0, "\(run.output)\n\(run.errors)")
        let result = try Self.result(in: run.output)
        #expect(result["requests"] as? Int == 50)
        #expect(result["accepted"] as? Int == 50 * 50)
        #expect(result["statuses"] as? String == "202×50")
        // One record per batch: a delivery report per request.
        #expect(result["deliveryReports"] as? Int == 50)
        #expect(result["failedDeliveries"] as? Int == 0)
        #expect(result["spooledRecords"] as? Double == 0)
        #expect(result["ack"] as? String == "delivery")
        #expect(result["underValgrind"] as? Bool == false)
        #expect(run.output.contains("not under valgrind: timing only"))
    }

    @Test("gzip bodies without a batch id, answered at enqueue, are all accepted too")
    func gzipEnqueueRun() async throws {
        let run = try await ChildProcess.run(
            try Self.benchExecutable(),
            [
                "instructions", "--requests", "30", "--warmup", "5", "--batches", "8", "--encoding", "gzip", "--ack",
                "enqueue", "--connections", "3",
            ], timeout: .seconds(240))
        #expect(run.status == 0, "\(run.output)\n\(run.errors)")
        let result = try Self.result(in: run.output)
        #expect(result["accepted"] as? Int == 30 * 50)
        #expect(result["encoding"] as? String == "gzip")
        #expect(result["ids"] as? String == "none")
        #expect(result["ack"] as? String == "enqueue")
        // Enqueue answers before delivery; the run still waits for every report before it ends.
        #expect(result["deliveryReports"] as? Int == 30)
    }

    @Test("an unknown option is a usage error")
    func usageError() async throws {
        let run = try await ChildProcess.run(
            try Self.benchExecutable(), ["instructions", "--requests", "many"], timeout: .seconds(60))
        #expect(run.status == 2)
        #expect(run.output.contains("usage: flowmeter-bench instructions"))
    }

    /// One thread's dump in callgrind's format, with name compression as callgrind writes it.
    static func dump(thread: Int, trigger: String, body: String) -> String {
        """
        # callgrind format
        version: 1
        creator: callgrind-3.19.0
        pid: 4242
        cmd:  /repo/.build/release/flowmeter-bench instructions
        part: 1
        thread: \(thread)

        desc: Trigger: \(trigger)

        positions: line
        events: Ir

        """ + body
    }

    static let measured = "dump flowmeter-bench-instructions-measured"
    static let process =
        "$s9Collector13IngestHandlerC7process33_DD10205D7677DAF3B1DE74D26F8FC539LLyy10HTTPServer11HTTPRequestV_AF13HTTPResponderVtAA0B9RejectionOYKF"
    static let decode =
        "$s15FlowmeterModels16FastBatchDecoderO6decodeyAA07DecodedD0VSays5UInt8VGAA0D13DecodingErrorVYKFZ"

    // An HTTP thread: start_thread (10) → a libmicrohttpd function (200) → our handleAccess (50) → process (100),
    // which calls decode (300 of its own) twice and malloc five times; decode calls malloc three times; malloc's own
    // cost is 350 over its eight calls. The thread's total is 1,010.
    static let httpThread = """
        ob=(1) /usr/lib/x86_64-linux-gnu/libc.so.6
        fl=(1) ???
        fn=(1) start_thread
        0 10
        cob=(2) /usr/lib/x86_64-linux-gnu/libmicrohttpd.so.12.60.0
        cfn=(2) 0x0000000000017cf0
        calls=1 0
        0 1000

        ob=(2)
        fn=(2)
        0 200
        cob=(3) /repo/.build/x86_64-unknown-linux-gnu/release/flowmeter-bench
        cfn=(3) handleAccess
        calls=2 0
        0 800

        ob=(3)
        fn=(3)
        0 50
        cfn=(4) \(process)
        calls=2 0
        0 750

        fn=(4)
        0 100
        cfn=(5) \(decode)
        calls=2 0
        0 400
        cob=(1)
        cfn=(6) malloc
        calls=5 0
        0 250

        fn=(5)
        0 300
        cob=(1)
        cfn=(6)
        calls=3 0
        0 100

        ob=(1)
        fn=(6)
        0 350

        """

    // A librdkafka thread (505) and the client's (77); a later dump at exit that must not be read.
    static let kafkaThread = """
        ob=(1) /usr/lib/x86_64-linux-gnu/libc.so.6
        fn=(1) start_thread
        0 5
        cob=(2) /usr/lib/x86_64-linux-gnu/librdkafka.so.1
        cfn=(2) 0x000000000003cda0
        calls=1 0
        0 500

        ob=(2)
        fn=(2)
        0 500

        """
    static let clientThread = """
        ob=(1) /repo/.build/x86_64-unknown-linux-gnu/release/flowmeter-bench
        fn=(1) $s15flowmeter_bench15PipelinedClientC3run5count7requestAC6TotalsVSi_SaySo5UInt8VGSiXEtKF
        0 77

        """

    @Test("the stage table sums threads, stages and malloc calls per event, and compares with a base")
    func stageTable() throws {
        guard Tool.python.isInstalled else { return }
        let directory = try TemporaryDirectory(prefix: "flowmeter-bench-instructions-test")
        let dumps = directory.file("dumps")
        try FileManager.default.createDirectory(atPath: dumps, withIntermediateDirectories: true)
        let files = [
            ("callgrind.out.1-01", Self.dump(thread: 1, trigger: Self.measured, body: "ob=(1) x\nfn=(1) main\n0 9\n")),
            ("callgrind.out.1-02", Self.dump(thread: 2, trigger: Self.measured, body: Self.httpThread)),
            ("callgrind.out.1-03", Self.dump(thread: 3, trigger: Self.measured, body: Self.kafkaThread)),
            ("callgrind.out.1-04", Self.dump(thread: 4, trigger: Self.measured, body: Self.clientThread)),
            ("callgrind.out-02", Self.dump(thread: 2, trigger: "Program termination", body: Self.httpThread)),
        ]
        for (name, text) in files {
            try text.write(toFile: dumps + "/" + name, atomically: true, encoding: .utf8)
        }
        let result = #"{"command": ["valgrind"], "result": {"accepted": 100, "requests": 2, "ack": "delivery"}}"#
        try result.write(toFile: dumps + "/result.json", atomically: true, encoding: .utf8)
        let script = Repository.path("scripts/bench-instructions.py")
        let first = try Tool.python.run(
            [script, "--parse", dumps, "--out-dir", directory.file("out")], in: directory.path, timeout: .seconds(60))
        #expect(first.succeeded, "\(first.transcript)")
        // A result.json that names no commit (the script writes the measured one) is named "unknown".
        let report = try #require(
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: URL(fileURLWithPath: directory.file("out/unknown.json")))) as? [String: Any])
        var perEvent: [String: Double] = [:]
        for row in report["rows"] as? [[String: Any]] ?? [] {
            if let key = row["key"] as? String, let value = row["perEvent"] as? Double { perEvent[key] = value }
        }
        #expect(perEvent["collector_total"] == 15.15)
        #expect(perEvent["collector_own"] == 10.1)
        #expect(perEvent["http"] == 10.1)
        #expect(perEvent["http_callbacks"] == 8.0)
        #expect(perEvent["http_mhd"] == 2.1)
        #expect(perEvent["librdkafka"] == 5.05)
        #expect(perEvent["handler"] == 7.5)
        #expect(perEvent["decode"] == 4.0)
        #expect(perEvent["allocator"] == 3.5)
        #expect(perEvent["client"] == 0.77)
        #expect(perEvent["main"] == 0.09)
        #expect(perEvent["inflate"] == nil)
        let allocations = try #require(report["allocationsPerRequest"] as? [String: Double])
        #expect(allocations["http"] == 4.0)
        #expect(allocations["collector_total"] == 4.0)
        #expect(first.output.contains("  inflate (gzip bodies)"))

        let second = try Tool(path: "/usr/bin/env").run(
            [
                "BASE=" + directory.file("out/unknown.json"), Tool.python.path, script, "--parse", dumps, "--out-dir",
                directory.file("out2"),
            ], in: directory.path, timeout: .seconds(60))
        #expect(second.succeeded, "\(second.transcript)")
        #expect(second.output.contains("vs base"))
        #expect(second.output.contains("+0.0%"))
    }
}
