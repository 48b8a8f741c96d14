import Foundation
import IngestBenchmarks
import Kafka
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// `flowmeter-bench ingest`: Flowmeter's collector and the Python peer under the same HTTP load, side by side, over a
/// matrix of ack mode × connections × encoding × batch set.
///
/// One librdkafka mock cluster runs in this process and both collectors publish to it, so neither pays for the
/// cluster's CPU. Each collector is pinned to one core (`--cpu`); the load generator and the cluster use the other.
/// Both collectors of an ack mode run together, and take turns: the one not under load is stopped with SIGSTOP.
/// Every run is bounded by `--seconds` and `--max-requests`, and every socket is on 127.0.0.1.
enum IngestBenchmark {
    static let key = "bench-ingest-key"

    /// A collector the matrix measures, started once per ack mode.
    struct Target {
        var name: String
        var start: (_ ack: String, _ port: UInt16) throws -> MeasuredProcess
    }

    /// A started target with its port.
    struct Running {
        var name: String
        var process: MeasuredProcess
        var port: UInt16
    }

    static func run(_ arguments: [String]) -> Int32 {
        if arguments.contains("--help") || arguments.contains("-h") {
            print(IngestOptions.usage)
            return 0
        }
        let options: IngestOptions
        switch IngestOptions.parse(arguments) {
        case .success(let parsed): options = parsed
        case .failure(let error):
            print("error: \(error)\n\(IngestOptions.usage)")
            return 2
        }
        if let cpu = options.cpu { pinSelf(awayFrom: cpu, arguments: arguments) }
        do {
            try measure(options, arguments: arguments)
            return 0
        } catch {
            print("error: \(error)")
            return 1
        }
    }

    static func measure(_ options: IngestOptions, arguments: [String]) throws {
        let started = Date()
        let loadAtStart = loadAverage()
        // Before any measuring: the checkout may change while the matrix runs.
        let commit = commit()
        let workDirectory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "flowmeter-bench-\(getpid())")
        try FileManager.default.createDirectory(at: workDirectory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: workDirectory) }
        InterruptCleanup.install()
        InterruptCleanup.register(folder: workDirectory)
        let cluster = try KafkaMockCluster(brokers: 3)
        for topic in ["flowmeter.events.v1", "flowmeter.rollups.v1", "flowmeter.alerts.v1", "flowmeter.deploys.v1"] {
            try cluster.createTopic(topic, partitions: 6, replicationFactor: 3)
        }
        let bootstrap = cluster.bootstrapServers.joined(separator: ",")
        let keysFile = workDirectory.appendingPathComponent("keys.json")
        try Data(
            """
            {"ingestKeys": [{"key": "\(key)", "apps": ["*"],
              "rateLimit": {"eventsPerSecond": 1000000000, "burst": 1000000000}}], "adminKeys": []}
            """.utf8
        ).write(to: keysFile)
        let bodies = try IngestBodies(count: options.batchCount, repeatedBytes: options.repeatedBatchBytes)
        let targets = makeTargets(
            options: options, bootstrap: bootstrap, keysFile: keysFile, workDirectory: workDirectory)

        var header = [
            "kafka: librdkafka mock cluster in the benchmark process, 3 brokers, \(bootstrap)",
            bodies.description,
            "load: \(options.rounds) rounds of \(format(options.seconds)) s per cell, CPU counted until "
                + "\(format(options.settleSeconds)) s after each run, at most \(options.maxRequests) requests a run",
            "cpus: collectors on \(options.cpu.map { "CPU \($0)" } ?? "any CPU"), load generator and Kafka on "
                + (ProcessInfo.processInfo.environment["FLOWMETER_BENCH_PINNED"].map { "CPU \($0)" } ?? "any CPU"),
            "targets: " + targets.map(\.name).joined(separator: ", ")
                + (options.pausesIdleTarget ? ", the one not under load stopped (SIGSTOP)" : ", both always running")
                + "; load average at start: \(loadAtStart)",
        ]
        header.forEach { print($0) }

        let cells = IngestCell.matrix(
            acks: options.acks, connections: options.connections, encodings: options.encodings,
            batches: options.batches)
        var progress = RunProgress(total: cells.count * targets.count * options.rounds, started: started)
        var measurements: [IngestMeasurement] = []
        var notes: [String] = []
        var spoolRSS: [(label: String, peakRSSMiB: Double)] = []
        for ack in options.acks {
            let running = try targets.map { target in
                let port = try ServerProcess.freeLoopbackPort()
                let process = try target.start(ack, port)
                process.pausesWhenIdle = options.pausesIdleTarget
                // Warm up: connections, the producer's metadata, the allocator.
                let warmUp = bodies.requests(port: port, key: key, encoding: "plain", batches: "distinct")
                _ = LoadGenerator(host: "127.0.0.1", port: port, requests: warmUp).run(
                    connections: 8, seconds: 1, maxRequests: 2_000)
                process.pause()
                return Running(name: target.name, process: process, port: port)
            }
            defer { running.forEach { $0.process.stop() } }
            print(
                "\n\(ack): \(running.map(\.name).joined(separator: " and ")) started (pids "
                    + running.map { String($0.process.pid) }.joined(separator: ", ") + ")")
            fflush(nil)
            for round in 1...options.rounds {
                for cell in cells where cell.ack == ack {
                    // Alternate who goes first, so neither always follows the other's backlog.
                    for target in round % 2 == 1 ? running : running.reversed() {
                        let measurement = measureCell(
                            cell, round: round, target: target, bodies: bodies, options: options)
                        measurements.append(measurement)
                        print(progress.advance() + describe(measurement))
                        // Progress as it happens, also through `| tee` (fflush(NULL) flushes stdout).
                        fflush(nil)
                    }
                }
            }
            let modeSummary = IngestSummary(measurements: measurements.filter { $0.cell.ack == ack })
            notes += measureHalfPeak(ack: ack, running: running, summary: modeSummary, bodies: bodies, options: options)
            // A stopped process cannot answer: each is resumed for its counters and for the spool row.
            if let peer = running.first(where: { $0.name == "python-peer" }) {
                peer.process.resume()
                if let stats = HTTPConnection(host: "127.0.0.1", port: peer.port)?.get("/stats") {
                    // The peer answers 202 even when it drops events it cannot parse: its counters say if it did.
                    notes.append("python-peer \(ack) /stats: \(stats.trimmingCharacters(in: .whitespacesAndNewlines))")
                    print(notes[notes.count - 1])
                }
                peer.process.pause()
            }
            if let flowmeter = running.first(where: { $0.name == "flowmeter" }) {
                flowmeter.process.resume()
                notes += rejections(port: flowmeter.port, ack: ack)
                flowmeter.process.pause()
                if ack == "delivered", options.measuresSpool, let connections = options.connections.max() {
                    flowmeter.process.resume()
                    let (row, replay) = try measureSpooling(
                        process: flowmeter.process, port: flowmeter.port, cluster: cluster,
                        requests: bodies.requests(
                            port: flowmeter.port, key: key, encoding: "plain", batches: "distinct"),
                        connections: connections, options: options)
                    flowmeter.process.pause()
                    spoolRSS.append(("spool row", row.peakRSSMiB))
                    let lines = [
                        "Every broker down, answered from the disk spool (plain distinct, delivered): "
                            + describe(row), describe(replay),
                    ]
                    lines.forEach { print($0) }
                    notes += lines
                }
            }
        }

        let summary = IngestSummary(measurements: measurements)
        let verdicts = summary.verdicts(extraRSS: spoolRSS)
        header.append(
            "load average at end: \(loadAverage()); wall time \(format(Date().timeIntervalSince(started) / 60)) min")
        print("\nSummary: events per CPU-second of the collector process, median of \(options.rounds) rounds")
        summary.ratioTable.text.forEach { print($0) }
        print("\nPer target and cell (medians; RSS is the largest VmHWM; cs/req: context switches of all threads)")
        summary.rowTable.text.forEach { print($0) }
        print("")
        notes.forEach { print($0) }
        print("\nGoals (issue 15):")
        IngestSummary.verdictLines(verdicts).forEach { print($0) }
        let path = options.markdownPath ?? ".build/bench/ingest-\(commit.short).md"
        try writeMarkdown(
            to: path, commit: commit, arguments: arguments, header: header, summary: summary, verdicts: verdicts,
            notes: notes)
        print("\nMarkdown summary: \(path)")
    }

    /// One target on one cell: the load for `--seconds`, then the settle, with the process's counters around both.
    static func measureCell(
        _ cell: IngestCell, round: Int, target: Running, bodies: IngestBodies, options: IngestOptions
    ) -> IngestMeasurement {
        let generator = LoadGenerator(
            host: "127.0.0.1", port: target.port,
            requests: bodies.requests(port: target.port, key: key, encoding: cell.encoding, batches: cell.batches))
        target.process.resume()
        defer { target.process.pause() }
        let before = target.process.counters()
        let started = Date()
        let result = generator.run(
            connections: cell.connections, seconds: options.seconds, maxRequests: options.maxRequests)
        Thread.sleep(forTimeInterval: options.settleSeconds)
        let after = target.process.counters()
        let window = Date().timeIntervalSince(started)
        return IngestMeasurement(
            target: target.name, cell: cell, round: round, requests: result.requests, events: result.events,
            elapsed: result.elapsed, cpuSeconds: after.cpuSeconds - before.cpuSeconds, window: window,
            p50Millis: result.percentile(0.5), p99Millis: result.percentile(0.99), peakRSSMiB: after.peakRSSMiB,
            contextSwitches: after.contextSwitches - before.contextSwitches, threads: after.threads,
            statusCounts: result.statusCounts, failures: result.failures)
    }

    /// Latency under a paced load of half Flowmeter's peak request rate in this mode (its best plain cell, at that
    /// cell's connections and batch set); the peer also at half of its own peak.
    static func measureHalfPeak(
        ack: String, running: [Running], summary: IngestSummary, bodies: IngestBodies, options: IngestOptions
    ) -> [String] {
        let peaks = Dictionary(
            running.compactMap { target in
                summary.rows.filter { $0.target == target.name && $0.cell.encoding == "plain" }
                    .max { $0.requestsPerSecond < $1.requestsPerSecond }.map { (target.name, $0) }
            }
        ) { first, _ in first }
        guard let flowmeterPeak = peaks["flowmeter"] else { return [] }
        var lines: [String] = []
        for target in running {
            var loads = [("half of flowmeter's peak", flowmeterPeak)]
            if target.name != "flowmeter", let own = peaks[target.name] { loads.append(("half of its own peak", own)) }
            for (label, peak) in loads {
                let rate = peak.requestsPerSecond / 2
                let generator = LoadGenerator(
                    host: "127.0.0.1", port: target.port,
                    requests: bodies.requests(
                        port: target.port, key: key, encoding: "plain", batches: peak.cell.batches))
                target.process.resume()
                let result = generator.run(
                    connections: peak.cell.connections, seconds: options.seconds, maxRequests: options.maxRequests,
                    ratePerSecond: rate)
                target.process.pause()
                let line =
                    "\(target.name) \(ack) at \(label) (\(format(rate)) req/s, \(peak.cell.connections) conns, plain "
                    + "\(peak.cell.batches)): p50 \(format(result.percentile(0.5), 2)) ms, "
                    + "p99 \(format(result.percentile(0.99), 2)) ms, statuses \(describe(result.statusCounts))"
                print(line)
                lines.append(line)
            }
        }
        return lines
    }

    /// Flowmeter's rejection and delivery-error counters, when any are non-zero: a row with them is not a clean one.
    static func rejections(port: UInt16, ack: String) -> [String] {
        guard let metrics = HTTPConnection(host: "127.0.0.1", port: port)?.get("/metrics") else { return [] }
        let interesting = metrics.split(separator: "\n").filter {
            ($0.hasPrefix("flowmeter_rejections_total") || $0.hasPrefix("flowmeter_kafka_delivery_errors_total"))
                && !$0.hasSuffix(" 0")
        }
        guard !interesting.isEmpty else { return [] }
        let lines = ["flowmeter \(ack): rejections and delivery errors:"] + interesting.map { "    \($0)" }
        lines.forEach { print($0) }
        return lines
    }

    static func makeTargets(
        options: IngestOptions, bootstrap: String, keysFile: URL, workDirectory: URL
    ) -> [Target] {
        let flowmeter = options.flowmeterPath ?? siblingExecutable("flowmeter")
        var targets = [
            Target(name: "flowmeter") { ack, port in
                // A fresh spool directory per start, so one mode's spool never replays into the next.
                let spool = workDirectory.appendingPathComponent("spool-\(ack)")
                let process = try MeasuredProcess(
                    name: "flowmeter-\(ack)", executable: flowmeter,
                    arguments: [
                        "serve", "--listen", "127.0.0.1:\(port)", "--keys", keysFile.path, "--kafka", bootstrap,
                        "--ack", ack == "delivered" ? "delivery" : ack, "--log-level", "warning", "--threads", "1",
                        "--per-ip-connection-limit", "4096", "--connection-limit", "4096",
                    ]
                        + (options.measuresSpool
                            ? ["--spool", spool.path, "--spool-max-bytes", "16GiB"] : ["--spool", "none"]),
                    // "bench-salt-flowmeter": serve refuses a salt under 16 bytes.
                    environment: ["FLOWMETER_SALT": "62656e63682d73616c742d666c6f776d65746572"], cpu: options.cpu,
                    logDirectory: workDirectory)
                try process.waitUntilServing(port: port, path: "/healthz", timeout: 20)
                return process
            }
        ]
        if !options.skipsPeer, let peer = options.peerDirectory ?? locatePeer() {
            targets.append(
                Target(name: "python-peer") { ack, port in
                    let process = try MeasuredProcess(
                        name: "python-peer-\(ack)", executable: "/bin/bash",
                        arguments: ["\(peer)/run.sh", bootstrap, String(port)],
                        environment: ["ACK": ack], cpu: options.cpu, logDirectory: workDirectory)
                    try process.waitUntilServing(port: port, path: "/stats", timeout: 120)
                    return process
                })
        } else if !options.skipsPeer {
            print("note: the Python peer was not found (pass --peer DIR); measuring Flowmeter alone")
        }
        return targets
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

    static func describe(_ measurement: IngestMeasurement) -> String {
        measurement.target.padding(toLength: 12, withPad: " ", startingAt: 0)
            + String(
                format: " %@ r%d: %8.0f events/s %8.0f events/cpu-s  p50 %6.2f ms  p99 %7.2f ms  cpu %5.2f s  "
                    + "core %3.0f%%  rss %6.1f MiB  cs/req %.2f+%.2f  threads %d  ",
                measurement.cell.label, measurement.round, measurement.eventsPerSecond,
                measurement.eventsPerCPUSecond, measurement.p50Millis, measurement.p99Millis, measurement.cpuSeconds,
                100 * measurement.coreShare, measurement.peakRSSMiB, measurement.voluntarySwitchesPerRequest,
                measurement.involuntarySwitchesPerRequest, measurement.threads)
            + describe(measurement.statusCounts)
            + (measurement.failures > 0 ? " failures=\(measurement.failures)" : "")
    }

    static func describe(_ statuses: [Int: Int]) -> String {
        statuses.sorted { $0.key < $1.key }.map { "\($0.key)×\($0.value)" }.joined(separator: " ")
    }

    static func format(_ value: Double, _ digits: Int = 0) -> String {
        String(format: "%.\(digits)f", value)
    }

    static func siblingExecutable(_ name: String) -> String {
        URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent(name).path
    }

    /// The peer ships in this repository's `bench/peer_python`: wherever FLOWMETER_PEER_DIR says, else under the
    /// working directory (`make bench` runs at the root), else under the nearest directory above the executable
    /// (`.build/<triple>/release/flowmeter-bench`) that has it.
    static func locatePeer() -> String? {
        var executableAncestors: [String] = []
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent()
        while directory.path != "/", executableAncestors.count < 32 {
            executableAncestors.append(directory.path + "/bench/peer_python")
            directory = directory.deletingLastPathComponent()
        }
        let candidates =
            [
                ProcessInfo.processInfo.environment["FLOWMETER_PEER_DIR"],
                FileManager.default.currentDirectoryPath + "/bench/peer_python",
            ].compactMap { $0 } + executableAncestors
        return candidates.first { FileManager.default.fileExists(atPath: $0 + "/peer.py") }
            .map { URL(fileURLWithPath: $0).standardizedFileURL.path }
    }
}
