import FlowmeterModels
import Foundation
import Gzip
import Kafka
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// `flowmeter-bench ingest`: Flowmeter's collector and the Python peer under the same HTTP load, side by side.
///
/// One librdkafka mock cluster runs in this process and both collectors publish to it, so neither pays for the
/// cluster's CPU. Each collector is pinned to one core (`--cpu`); the load generator and the cluster use the other.
/// Every run is bounded by `--seconds` and `--max-requests`, and every socket is on 127.0.0.1.
enum IngestBenchmark {
    struct Options {
        var seconds = 10.0
        var connections = [32, 128]
        var maxRequests = 5_000_000
        var flowmeterPath: String?
        var peerDirectory: String?
        var skipsPeer = false
        var cpu: Int? = 1
        var ack = "delivered"
        var encodings = ["plain", "gzip"]
        var batchCount = 512
        var measuresSpool = true
    }

    struct Row {
        var target: String
        var encoding: String
        var connections: Int
        var result: LoadGenerator.Result
        var cpuSeconds: Double
        var peakRSSMiB: Double

        var eventsPerSecond: Double { Double(result.events) / result.elapsed }
        var eventsPerCPUSecond: Double { cpuSeconds > 0 ? Double(result.events) / cpuSeconds : 0 }
    }

    static let usage = """
        usage: flowmeter-bench ingest [--seconds N] [--connections 32,128] [--max-requests N] [--ack delivered|enqueue]
                                      [--encodings plain,gzip] [--flowmeter PATH] [--peer DIR] [--skip-peer] [--cpu N|none]
                                      [--skip-spool (serve --spool none, no spooling row)]
        """

    static func run(_ arguments: [String]) -> Int32 {
        var options = Options()
        var index = 0
        while index < arguments.count {
            let flag = arguments[index]
            let value = index + 1 < arguments.count ? arguments[index + 1] : ""
            index += 2
            switch flag {
            case "--seconds": options.seconds = Double(value) ?? options.seconds
            case "--connections": options.connections = value.split(separator: ",").compactMap { Int($0) }
            case "--max-requests": options.maxRequests = Int(value) ?? options.maxRequests
            case "--flowmeter": options.flowmeterPath = value
            case "--peer": options.peerDirectory = value
            case "--skip-peer": options.skipsPeer = true; index -= 1
            case "--skip-spool": options.measuresSpool = false; index -= 1
            case "--cpu": options.cpu = value == "none" ? nil : Int(value)
            case "--ack": options.ack = value
            case "--encodings": options.encodings = value.split(separator: ",").map(String.init)
            default:
                print(usage)
                return 2
            }
        }
        if let cpu = options.cpu { pinSelf(awayFrom: cpu, arguments: arguments) }
        do {
            try measure(options)
            return 0
        } catch {
            print("error: \(error)")
            return 1
        }
    }

    static func measure(_ options: Options) throws {
        let workDirectory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "flowmeter-bench-\(getpid())")
        try FileManager.default.createDirectory(at: workDirectory, withIntermediateDirectories: true)
        let cluster = try KafkaMockCluster(brokers: 3)
        for topic in ["flowmeter.events.v1", "flowmeter.rollups.v1", "flowmeter.alerts.v1", "flowmeter.deploys.v1"] {
            try cluster.createTopic(topic, partitions: 6, replicationFactor: 3)
        }
        let bootstrap = cluster.bootstrapServers.joined(separator: ",")
        print("kafka: librdkafka mock cluster, 3 brokers, \(bootstrap)")

        let key = "bench-ingest-key"
        let keysFile = workDirectory.appendingPathComponent("keys.json")
        try Data(
            """
            {"ingestKeys": [{"key": "\(key)", "apps": ["*"],
              "rateLimit": {"eventsPerSecond": 1000000000, "burst": 1000000000}}], "adminKeys": []}
            """.utf8
        ).write(to: keysFile)

        let bodies = SyntheticBatches.batches(count: options.batchCount, seed: 7)
        let averageBytes = bodies.reduce(0) { $0 + $1.count } / bodies.count
        // Gzip bodies cannot be patched per request, so they carry no batch id (it is optional); plain ones get a
        // unique id on every send. Either way no request looks like a retry of another.
        let gzipped = try bodies.map { body in
            var batch = try FastBatchDecoder.decode(body).batch
            batch.id = nil
            return Gzip.compress(Array(try JSONEncoder().encode(batch)))
        }
        let averageGzipBytes = gzipped.reduce(0) { $0 + $1.count } / gzipped.count
        print("batches: \(bodies.count) distinct, 50 events, \(averageBytes) bytes (\(averageGzipBytes) gzip)")
        print("load: \(options.seconds) s per run, at most \(options.maxRequests) requests, ack=\(options.ack)")
        print(
            "cpus: collectors on \(options.cpu.map { "CPU \($0)" } ?? "any CPU"), load generator and Kafka on "
                + (ProcessInfo.processInfo.environment["FLOWMETER_BENCH_PINNED"].map { "CPU \($0)" } ?? "any CPU"))

        var targets: [(name: String, start: (UInt16) throws -> MeasuredProcess)] = []
        let flowmeter = options.flowmeterPath ?? siblingExecutable("flowmeter")
        targets.append(
            (
                "flowmeter",
                { port in
                    let process = try MeasuredProcess(
                        name: "flowmeter", executable: flowmeter,
                        arguments: [
                            "serve", "--listen", "127.0.0.1:\(port)", "--keys", keysFile.path, "--kafka", bootstrap,
                            "--ack", options.ack == "delivered" ? "delivery" : options.ack, "--log-level", "warning",
                            "--threads", "1",
                            "--per-ip-connection-limit", "4096", "--connection-limit", "4096",
                        ]
                            + (options.measuresSpool
                                ? [
                                    "--spool", workDirectory.appendingPathComponent("spool").path,
                                    "--spool-max-bytes", "16GiB",
                                ] : ["--spool", "none"]),
                        environment: ["FLOWMETER_SALT": "62656e63682d73616c74"], cpu: options.cpu,
                        logDirectory: workDirectory)
                    try process.waitUntilServing(port: port, path: "/healthz", timeout: 20)
                    return process
                }
            ))
        if !options.skipsPeer, let peer = options.peerDirectory ?? locatePeer() {
            targets.append(
                (
                    "python-peer",
                    { port in
                        let process = try MeasuredProcess(
                            name: "python-peer", executable: "/bin/bash",
                            arguments: ["\(peer)/run.sh", bootstrap, String(port)],
                            environment: ["ACK": options.ack], cpu: options.cpu, logDirectory: workDirectory)
                        try process.waitUntilServing(port: port, path: "/stats", timeout: 120)
                        return process
                    }
                ))
        } else if !options.skipsPeer {
            print("note: the Python peer was not found (pass --peer DIR); measuring Flowmeter alone")
        }

        var rows: [Row] = []
        var spoolReplay: Replay?
        var halfPeak: [(target: String, result: LoadGenerator.Result, rate: Double)] = []
        for target in targets {
            let port = try ServerProcess.freeLoopbackPort()
            let process = try target.start(port)
            defer { process.stop() }
            for encoding in options.encodings {
                let requests = zip(bodies, gzipped).map { plain, compressed in
                    encoding == "gzip"
                        ? LoadGenerator.Request(
                            bytes: httpRequest(port: port, key: key, body: compressed, gzip: true), events: 50)
                        : plainRequest(port: port, key: key, body: plain)
                }
                let generator = LoadGenerator(host: "127.0.0.1", port: port, requests: requests)
                // Warm up: connections, the producer's metadata, the allocator.
                _ = generator.run(connections: 8, seconds: 1, maxRequests: 2_000)
                for connections in options.connections {
                    let cpuBefore = process.cpuSeconds()
                    let result = generator.run(
                        connections: connections, seconds: options.seconds, maxRequests: options.maxRequests)
                    let row = Row(
                        target: target.name, encoding: encoding, connections: connections, result: result,
                        cpuSeconds: process.cpuSeconds() - cpuBefore, peakRSSMiB: process.peakRSSMiB())
                    rows.append(row)
                    print(describe(row))
                }
            }
            if target.name == "flowmeter", let metrics = HTTPConnection(host: "127.0.0.1", port: port)?.get("/metrics")
            {
                let interesting = metrics.split(separator: "\n").filter {
                    $0.hasPrefix("flowmeter_rejections_total") || $0.hasPrefix("flowmeter_kafka_delivery_errors_total")
                }
                if !interesting.isEmpty {
                    print("flowmeter rejections and delivery errors so far:")
                    interesting.forEach { print("    \($0)") }
                }
            }
            if target.name == "flowmeter", options.measuresSpool, let connections = options.connections.max() {
                let requests = bodies.map { plainRequest(port: port, key: key, body: $0) }
                let (row, replay) = try measureSpooling(
                    process: process, port: port, cluster: cluster, requests: requests, connections: connections,
                    options: options)
                rows.append(row)
                spoolReplay = replay
                print(describe(row))
                print(describe(replay))
            }
            // Latency at half of this target's peak request rate, plain bodies, the most connections.
            if let peak = rows.filter({ $0.target == target.name && $0.encoding == "plain" }).max(by: {
                $0.eventsPerSecond < $1.eventsPerSecond
            }) {
                let rate = Double(peak.result.requests) / peak.result.elapsed / 2
                let requests = bodies.map { plainRequest(port: port, key: key, body: $0) }
                let generator = LoadGenerator(host: "127.0.0.1", port: port, requests: requests)
                let result = generator.run(
                    connections: peak.connections, seconds: options.seconds, maxRequests: options.maxRequests,
                    ratePerSecond: rate)
                halfPeak.append((target.name, result, rate))
                print(
                    "\(target.name) at half of peak "
                        + String(
                            format: "(%.0f req/s): p50 %.2f ms, p99 %.2f ms, ", rate, result.percentile(0.5),
                            result.percentile(0.99))
                        + "statuses \(describe(result.statusCounts))")
            }
        }
        printSummary(rows: rows, halfPeak: halfPeak, replay: spoolReplay)
        try? FileManager.default.removeItem(at: workDirectory)
    }

    /// Re-executes this benchmark under `taskset` on every CPU but `cpu`, so the load generator and the mock cluster
    /// never take time from the collector under test. Returns only when pinning is not possible or already done.
    static func pinSelf(awayFrom cpu: Int, arguments: [String]) {
        let environment = ProcessInfo.processInfo.environment
        let processors = ProcessInfo.processInfo.activeProcessorCount
        guard environment["FLOWMETER_BENCH_PINNED"] == nil, processors > 1,
            FileManager.default.isExecutableFile(atPath: "/usr/bin/taskset")
        else { return }
        let others = (0..<processors).filter { $0 != cpu }.map(String.init).joined(separator: ",")
        setenv("FLOWMETER_BENCH_PINNED", others, 1)
        let argv = ["taskset", "-c", others, CommandLine.arguments[0], "ingest"] + arguments
        var cArguments = argv.map { strdup($0) } + [nil]
        execv("/usr/bin/taskset", &cArguments)
        // execv returns only on failure: measure unpinned and say so.
        print("note: could not pin the benchmark away from CPU \(cpu); the load generator shares it")
    }

    static func describe(_ row: Row) -> String {
        row.target.padding(toLength: 12, withPad: " ", startingAt: 0) + " "
            + row.encoding.padding(toLength: 5, withPad: " ", startingAt: 0)
            + String(
                format: " %4d conns: %9.0f events/s %8.0f req/s  p50 %6.2f ms  p99 %7.2f ms  cpu %5.2f s  "
                    + "%9.0f events/cpu-s  rss %6.1f MiB  ",
                row.connections, row.eventsPerSecond, Double(row.result.requests) / row.result.elapsed,
                row.result.percentile(0.5), row.result.percentile(0.99), row.cpuSeconds, row.eventsPerCPUSecond,
                row.peakRSSMiB)
            + describe(row.result.statusCounts)
            + (row.result.failures > 0 ? " failures=\(row.result.failures)" : "")
    }

    static func describe(_ statuses: [Int: Int]) -> String {
        statuses.sorted { $0.key < $1.key }.map { "\($0.key)×\($0.value)" }.joined(separator: " ")
    }

    /// How the spool drained once the brokers were back.
    struct Replay {
        var records: Double
        var seconds: Double
        var cpuSeconds: Double

        var recordsPerSecond: Double { seconds > 0 ? records / seconds : 0 }
    }

    /// Every broker down: the same load, answered 202 from the disk spool (after a warm-up that lets the first
    /// batches pass the spool threshold); then the brokers come back and the spool is timed until it is empty.
    static func measureSpooling(
        process: MeasuredProcess, port: UInt16, cluster: KafkaMockCluster, requests: [LoadGenerator.Request],
        connections: Int, options: Options
    ) throws -> (Row, Replay) {
        let generator = LoadGenerator(host: "127.0.0.1", port: port, requests: requests)
        try cluster.setBrokerDown(KafkaMockCluster.allBrokers)
        _ = generator.run(connections: 8, seconds: 3, maxRequests: 2_000)
        let cpuBefore = process.cpuSeconds()
        let result = generator.run(connections: connections, seconds: options.seconds, maxRequests: options.maxRequests)
        let row = Row(
            target: "flowmeter", encoding: "spool", connections: connections, result: result,
            cpuSeconds: process.cpuSeconds() - cpuBefore, peakRSSMiB: process.peakRSSMiB())
        let spooled = spoolRecords(port: port) ?? 0
        if let metrics = HTTPConnection(host: "127.0.0.1", port: port)?.get("/metrics") {
            let lines = metrics.split(separator: "\n").filter {
                $0.hasPrefix("flowmeter_spool_") || $0.hasPrefix("flowmeter_kafka_delivered_total")
                    || $0.hasPrefix("flowmeter_kafka_up")
            }
            print("flowmeter spool after the outage load:")
            lines.forEach { print("    \($0)") }
        }
        let replayCPU = process.cpuSeconds()
        let started = Date()
        try cluster.setBrokerUp(KafkaMockCluster.allBrokers)
        while Date().timeIntervalSince(started) < 300, (spoolRecords(port: port) ?? 0) > 0 {
            Thread.sleep(forTimeInterval: 0.1)
        }
        let replay = Replay(
            records: spooled, seconds: Date().timeIntervalSince(started), cpuSeconds: process.cpuSeconds() - replayCPU)
        return (row, replay)
    }

    static func spoolRecords(port: UInt16) -> Double? {
        guard let metrics = HTTPConnection(host: "127.0.0.1", port: port)?.get("/metrics") else { return nil }
        for line in metrics.split(separator: "\n") where line.hasPrefix("flowmeter_spool_records ") {
            return Double(line.dropFirst("flowmeter_spool_records ".count))
        }
        return nil
    }

    static func describe(_ replay: Replay) -> String {
        String(
            format: "flowmeter    replay of the spool once the brokers are back: %.0f records in %.1f s, "
                + "%.0f records/s, cpu %.2f s",
            replay.records, replay.seconds, replay.recordsPerSecond, replay.cpuSeconds)
    }

    static func printSummary(
        rows: [Row], halfPeak: [(target: String, result: LoadGenerator.Result, rate: Double)], replay: Replay?
    ) {
        print("\nSummary: events per CPU-second of the collector process (higher is better)")
        print("encoding conns   flowmeter   python-peer   ratio")
        for row in rows where row.target == "flowmeter" {
            let peer = rows.first {
                $0.target == "python-peer" && $0.encoding == row.encoding && $0.connections == row.connections
            }
            let peerValue = peer.map { String(format: "%11.0f", $0.eventsPerCPUSecond) } ?? "          -"
            let ratio =
                peer.map { String(format: "%6.2f×", row.eventsPerCPUSecond / max($0.eventsPerCPUSecond, 1)) }
                ?? "     -"
            print(
                row.encoding.padding(toLength: 8, withPad: " ", startingAt: 0)
                    + String(format: " %5d %11.0f ", row.connections, row.eventsPerCPUSecond) + peerValue + " " + ratio)
        }
        if let spool = rows.first(where: { $0.encoding == "spool" }) {
            let kafka = rows.filter { $0.target == "flowmeter" && $0.encoding == "plain" }.max {
                $0.connections < $1.connections
            }
            print("\nEvery broker down, answered from the disk spool (plain bodies), beside the Kafka path:")
            for row in [kafka, spool].compactMap({ $0 }) {
                print(
                    (row.encoding == "spool" ? "spool   " : "kafka   ")
                        + String(
                            format: " %5d conns %11.0f events/cpu-s %9.0f events/s  p99 %7.2f ms  ", row.connections,
                            row.eventsPerCPUSecond, row.eventsPerSecond, row.result.percentile(0.99))
                        + describe(row.result.statusCounts))
            }
            if let replay { print(describe(replay)) }
        }
    }

    /// A plain request whose batch id the load generator rewrites on every send.
    static func plainRequest(port: UInt16, key: String, body: [UInt8]) -> LoadGenerator.Request {
        let bytes = httpRequest(port: port, key: key, body: body, gzip: false)
        var range: Range<Int>?
        if let id = try? FastBatchDecoder.decode(body).batch.id, id.utf8.count == 36 {
            let needle = Array("\"id\":\"\(id)\"".utf8)
            if let start = firstIndex(of: needle, in: bytes) {
                range = (start + 6)..<(start + 6 + 36)
            }
        }
        return LoadGenerator.Request(bytes: bytes, events: 50, batchIDRange: range)
    }

    static func firstIndex(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if haystack[start..<(start + needle.count)].elementsEqual(needle) { return start }
        }
        return nil
    }

    static func httpRequest(port: UInt16, key: String, body: [UInt8], gzip: Bool) -> [UInt8] {
        var head = "POST /v1/diagnostics HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAuthorization: Bearer \(key)\r\n"
        head += "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n"
        if gzip { head += "Content-Encoding: gzip\r\n" }
        head += "\r\n"
        return Array(head.utf8) + body
    }

    static func siblingExecutable(_ name: String) -> String {
        URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent(name).path
    }

    /// The peer ships beside this repository in `../shared/bench/peer_python`, or wherever FLOWMETER_PEER_DIR says.
    static func locatePeer() -> String? {
        let candidates = [
            ProcessInfo.processInfo.environment["FLOWMETER_PEER_DIR"],
            FileManager.default.currentDirectoryPath + "/../shared/bench/peer_python",
        ].compactMap { $0 }
        return candidates.first { FileManager.default.fileExists(atPath: $0 + "/peer.py") }
            .map { URL(fileURLWithPath: $0).standardizedFileURL.path }
    }
}
