import CCallgrind
import Collector
import FlowmeterModels
import FlowmeterRuntime
import FlowmeterWire
import Foundation
import Gzip
import Kafka
import Logging
import ProcessAllocator
import Synchronization
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// `flowmeter-bench instructions`: a fixed number of requests through the real collector in this process, for
/// `valgrind --tool=callgrind` to count instructions per event (docs/performance.md; `make bench-instructions`).
///
/// The collector is the one `flowmeter serve` builds (`makeServe`), with a disk spool, so the default `--ack
/// delivery` path goes through the spooling delivery. It publishes to librdkafka's mock cluster, which runs in a
/// child process that Valgrind does not follow. One client thread (``PipelinedClient``) keeps one request in flight
/// on each of several keep-alive connections, in a fixed order. After the warm-up the callgrind counters of every thread
/// are zeroed (through `vgdb`); once every measured answer is read and every delivery report is in, they are dumped,
/// so start-up and shutdown are not counted. Outside Valgrind the same run prints a plain timing line instead.
enum InstructionsBenchmark {
    struct Options {
        var requests = 2_000
        var warmup = 200
        var connections = 8
        var ack = CollectorConfiguration.AckMode.delivery
        var encoding = "plain"
        var uniqueIDs = true
        var threads: Int?
        var batchCount = 512
    }

    static let usage = """
        usage: flowmeter-bench instructions [--requests N (2000)] [--warmup N (200)] [--connections N (8)]
                                            [--ack delivery|enqueue] [--encoding plain|gzip] [--ids unique|none]
                                            [--threads N (HTTP threads; default the collector's)] [--batches N (512)]
        Run under valgrind --tool=callgrind (scripts/bench-instructions.sh does, with the stage table).
        """

    /// The label of the one callgrind dump that holds the measured requests; the script picks it by this text.
    static let dumpLabel = "flowmeter-bench-instructions-measured"

    static func run(_ arguments: [String]) -> Int32 {
        if arguments.first == "--serve-mock-cluster", arguments.count == 2, let partitions = Int(arguments[1]),
            partitions > 0
        {
            return MockClusterProcess.serve(partitions: partitions)
        }
        guard let options = parse(arguments) else {
            print(usage)
            return 2
        }
        do {
            return try measure(options)
        } catch {
            print("error: \(error)")
            return 1
        }
    }

    static func parse(_ arguments: [String]) -> Options? {
        var options = Options()
        var index = 0
        while index < arguments.count {
            let flag = arguments[index]
            guard index + 1 < arguments.count else { return nil }
            let value = arguments[index + 1]
            index += 2
            switch flag {
            case "--requests": options.requests = Int(value) ?? 0
            case "--warmup": options.warmup = Int(value) ?? -1
            case "--connections": options.connections = Int(value) ?? 0
            case "--ack":
                guard let mode = CollectorConfiguration.AckMode(rawValue: value == "delivered" ? "delivery" : value)
                else { return nil }
                options.ack = mode
            case "--encoding":
                guard value == "plain" || value == "gzip" else { return nil }
                options.encoding = value
            case "--ids":
                guard value == "unique" || value == "none" else { return nil }
                options.uniqueIDs = value == "unique"
            case "--threads": options.threads = Int(value) ?? 0
            case "--batches": options.batchCount = Int(value) ?? 0
            default: return nil
            }
        }
        guard options.requests > 0, options.warmup >= 0, options.connections > 0, options.batchCount > 0,
            options.threads.map({ $0 > 0 }) ?? true
        else { return nil }
        // Gzip bodies cannot be patched per request, so they carry no batch id.
        if options.encoding == "gzip" { options.uniqueIDs = false }
        return options
    }

    /// The requests, one per batch body, and where each one's batch id sits (unique ids only).
    struct Requests {
        var messages: [[UInt8]] = []
        var idRanges: [Range<Int>?] = []
        var eventsPerBatch = 50
        var averageBodyBytes = 0

        /// The `sequence`-th request of the run: batch `sequence % count`, with a batch id no other request has.
        func message(_ sequence: Int) -> [UInt8] {
            let index = sequence % messages.count
            guard let range = idRanges[index] else { return messages[index] }
            var bytes = messages[index]
            LoadGenerator.writeUniqueID(
                run: 0, worker: UInt16(truncatingIfNeeded: sequence >> 32),
                sequence: UInt32(truncatingIfNeeded: sequence),
                into: &bytes, at: range)
            return bytes
        }
    }

    static let key = "bench-instructions-key"

    static func requests(port: UInt16, options: Options) throws -> Requests {
        var requests = Requests()
        var bodyBytes = 0
        for body in SyntheticBatches.batches(count: options.batchCount, seed: 7) {
            if options.uniqueIDs {
                let request = IngestBodies.plainRequest(port: port, key: key, body: body)
                requests.messages.append(request.bytes)
                requests.idRanges.append(request.batchIDRange)
                bodyBytes += body.count
                continue
            }
            var batch = try FastBatchDecoder.decode(body).batch
            batch.id = nil
            let json = Array(try JSONEncoder().encode(batch))
            let sent = options.encoding == "gzip" ? Gzip.compress(json) : json
            requests.messages.append(
                IngestBodies.httpRequest(port: port, key: key, body: sent, gzip: options.encoding == "gzip"))
            requests.idRanges.append(nil)
            bodyBytes += sent.count
        }
        requests.averageBodyBytes = bodyBytes / options.batchCount
        return requests
    }

    /// What the client thread hands back, and the points where it waits for the main thread.
    final class Phases: Sendable {
        let warmedUp = DispatchSemaphore(value: 0)
        let go = DispatchSemaphore(value: 0)
        let measured = DispatchSemaphore(value: 0)
        let dumped = DispatchSemaphore(value: 0)
        let warmupTotals = Mutex<Result<PipelinedClient.Totals, PipelinedClient.Failure>?>(nil)
        let measuredTotals = Mutex<Result<PipelinedClient.Totals, PipelinedClient.Failure>?>(nil)
    }

    static func measure(_ options: Options) throws -> Int32 {
        let underValgrind = ccallgrind_running_on_valgrind() != 0
        let work = try TemporaryDirectory(prefix: "flowmeter-bench-instructions")
        defer { work.remove() }
        let cluster = try MockClusterProcess(executable: IngestBenchmark.siblingExecutable("flowmeter-bench"))
        defer { cluster.stop() }

        let keysJSON = """
            {"ingestKeys": [{"key": "\(key)", "apps": ["*"],
              "rateLimit": {"eventsPerSecond": 1000000000, "burst": 1000000000}}], "adminKeys": []}
            """
        var configuration = CollectorConfiguration(keys: try IngestKeys(json: Data(keysJSON.utf8)))
        configuration.port = 0
        configuration.kafka = .brokers(cluster.bootstrapServers)
        configuration.ackMode = options.ack
        configuration.salt = Array("bench-instructions-salt".utf8)
        configuration.collectorID = "bench-instructions"
        if let threads = options.threads { configuration.threads = threads }
        // Under Valgrind everything is 20-100 times slower: no answer may run into a deadline, and no batch may wait
        // long enough for the spool to take it, or the profile would measure a different path.
        var spool = CollectorConfiguration.DiskSpool(directory: work.file("spool"))
        spool.threshold = .seconds(60)
        configuration.spool = spool
        configuration.responseDeadline = .seconds(120)
        configuration.requestDeadline = .seconds(120)
        configuration.logLevel = .warning
        let serve = try makeServe(
            ServeConfiguration(collector: configuration), logger: Logger(threshold: .warning, format: .logfmt))
        let collector = serve.collector
        let ended = DispatchSemaphore(value: 0)
        let groupError = Mutex<String?>(nil)
        Task.detached {
            do {
                try await serve.group.run()
            } catch {
                groupError.withLock { $0 = String(describing: error) }
            }
            ended.signal()
        }
        var stopped = false
        defer {
            if !stopped {
                serve.group.triggerShutdown(reason: "benchmark failed")
                _ = ended.wait(timeout: .now() + 60)
            }
        }
        try waitFor("the collector to listen", seconds: 120) {
            collector.port != 0 || groupError.withLock { $0 } != nil
        }
        if let error = groupError.withLock({ $0 }) { throw PipelinedClient.Failure(description: error) }
        let port = collector.port
        let requests = try requests(port: port, options: options)
        let events = options.requests * requests.eventsPerBatch

        print(
            "flowmeter-bench instructions: \(options.requests) requests (\(events) events) after \(options.warmup) "
                + "warm-up, \(options.connections) connections, ack=\(options.ack.rawValue), "
                + "encoding=\(options.encoding), ids=\(options.uniqueIDs ? "unique" : "none"), "
                + "http threads=\(configuration.threads), spool on, \(options.batchCount) batches of "
                + "\(requests.eventsPerBatch) events, \(requests.averageBodyBytes) bytes on average")
        print(
            "kafka: librdkafka mock cluster (3 brokers) in a child process, \(cluster.bootstrapServers.joined(separator: ","))"
        )
        print("allocator: \(ProcessAllocator.name) (the collector runs in this process)")
        print(
            underValgrind
                ? "callgrind: counters zeroed after the warm-up, dumped as '\(dumpLabel)' once every report is in"
                : "not under valgrind: timing only (make bench-instructions counts instructions)")

        let phases = Phases()
        let measuredCount = options.requests
        let warmupCount = options.warmup
        let connections = options.connections
        let client = Thread {
            // Everything this thread runs is the load client's cost; the stage table finds it by this type's name.
            let client: PipelinedClient
            do {
                client = try PipelinedClient(port: port, connections: connections)
            } catch {
                let failure = (error as? PipelinedClient.Failure) ?? PipelinedClient.Failure(description: "\(error)")
                phases.warmupTotals.withLock { $0 = .failure(failure) }
                phases.warmedUp.signal()
                return
            }
            let warm = Result { try client.run(count: warmupCount) { requests.message($0) } }
            phases.warmupTotals.withLock { $0 = warm.mapError(Self.failure) }
            phases.warmedUp.signal()
            guard case .success = warm else { return }
            phases.go.wait()
            let step = max(1, measuredCount / 10)
            let totals = Result {
                try client.run(count: measuredCount) { index in
                    if index > 0, index % step == 0 {
                        print("  \(index)/\(measuredCount) requests sent")
                        fflush(nil)
                    }
                    return requests.message(warmupCount + index)
                }
            }
            phases.measuredTotals.withLock { $0 = totals.mapError(Self.failure) }
            phases.measured.signal()
            // Alive until the dump, so its counters are in it.
            phases.dumped.wait()
            withExtendedLifetime(client) {}
        }
        client.stackSize = 1 << 20
        client.start()

        guard phases.warmedUp.wait(timeout: .now() + 900) == .success else {
            throw PipelinedClient.Failure(description: "the warm-up did not finish within 900 s")
        }
        let warm = try phases.warmupTotals.withLock { $0 }!.get()
        print("warm-up: \(warm.requests) requests, \(warm.statusSummary)")
        fflush(nil)
        try waitForReports(collector, seconds: 120)

        let producerBefore = collector.producer?.counters
        let switchesBefore = contextSwitches()
        let cpuBefore = processCPUSeconds()
        let clusterCPUBefore = cluster.cpuSeconds
        let started = ContinuousClock.now
        if underValgrind { try callgrind("zero") }
        phases.go.signal()
        guard phases.measured.wait(timeout: .now() + 1800) == .success else {
            throw PipelinedClient.Failure(description: "the measured requests did not finish within 1800 s")
        }
        let reportsSettled = (try? waitForReports(collector, seconds: 300)) != nil
        if underValgrind { try callgrind("dump " + dumpLabel) }
        let elapsed = ContinuousClock.now - started
        let cpu = processCPUSeconds() - cpuBefore
        let clusterCPU = cluster.cpuSeconds - clusterCPUBefore
        let switchesAfter = contextSwitches()
        let producerAfter = collector.producer?.counters
        phases.dumped.signal()
        let measured = phases.measuredTotals.withLock { $0 }
        let threads = threadCount()

        let metrics = collector.metrics.registry.render()
        serve.group.triggerShutdown(reason: "benchmark done")
        stopped = true
        if ended.wait(timeout: .now() + 120) == .timedOut { print("warning: the collector did not stop within 120 s") }

        let totals = try measured!.get()
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let spooled = sample("flowmeter_spool_appended_records_total", in: metrics) ?? 0
        let deliveries = (producerAfter?.delivered ?? 0) &- (producerBefore?.delivered ?? 0)
        let failedDeliveries = (producerAfter?.failed ?? 0) &- (producerBefore?.failed ?? 0)
        let voluntary = switchesAfter.voluntary - switchesBefore.voluntary
        let involuntary = switchesAfter.involuntary - switchesBefore.involuntary
        let result: [String: Any] = [
            "requests": totals.requests, "events": events, "accepted": totals.acceptedEvents,
            "statuses": totals.statusSummary, "seconds": seconds, "processCPUSeconds": cpu,
            "mockClusterCPUSeconds": clusterCPU, "deliveryReports": deliveries, "failedDeliveries": failedDeliveries,
            "spooledRecords": spooled, "voluntaryContextSwitches": voluntary,
            "involuntaryContextSwitches": involuntary, "threads": threads, "httpThreads": configuration.threads,
            "connections": options.connections, "ack": options.ack.rawValue, "encoding": options.encoding,
            "ids": options.uniqueIDs ? "unique" : "none", "warmup": options.warmup, "underValgrind": underValgrind,
            "averageBodyBytes": requests.averageBodyBytes, "allocator": ProcessAllocator.name,
        ]
        let line = try JSONSerialization.data(withJSONObject: result, options: [.sortedKeys])
        print("instructions-result " + String(decoding: line, as: UTF8.self))
        print(
            String(
                format: "measured: %d requests, %d of %d events accepted, %@; %.2f s wall, %.0f events/s, "
                    + "process CPU %.2f s (client included), mock cluster CPU %.2f s",
                totals.requests, totals.acceptedEvents, events, totals.statusSummary, seconds,
                Double(totals.acceptedEvents) / max(seconds, 1e-9), cpu, clusterCPU)
                + (underValgrind ? " (under valgrind: timings mean nothing)" : ""))
        print(
            String(
                format: "context switches per request: %.2f voluntary, %.2f involuntary; %d threads; "
                    + "%llu delivery reports, %llu failed, %.0f records spooled",
                Double(voluntary) / Double(options.requests), Double(involuntary) / Double(options.requests),
                threads, deliveries, failedDeliveries, spooled))
        var healthy = true
        if totals.acceptedEvents != events || totals.statuses[202] != options.requests {
            print("error: not every measured event was accepted (\(totals.statusSummary))")
            healthy = false
        }
        if spooled > 0 {
            print("warning: \(Int(spooled)) records went to the spool; the profile is not the Kafka path")
        }
        if !reportsSettled { print("warning: delivery reports were still outstanding at the dump") }
        return healthy ? 0 : 1
    }

    /// Sends `command` to callgrind in this process through `vgdb` (what `callgrind_control` does) and waits for it.
    ///
    /// Callgrind's client requests (`CALLGRIND_ZERO_STATS`, `CALLGRIND_DUMP_STATS_AT`) act on the calling thread
    /// only; `vgdb`'s `zero` and `dump` act on every thread, libmicrohttpd's and librdkafka's included.
    static func callgrind(_ command: String) throws {
        let vgdb = ProcessInfo.processInfo.environment["FLOWMETER_VGDB"] ?? "/usr/bin/vgdb"
        let words = [vgdb, "--pid=\(getpid())"] + command.split(separator: " ").map(String.init)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var argv = words.map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var child: pid_t = 0
        let spawned = posix_spawn(&child, vgdb, &actions, nil, &argv, environ)
        guard spawned == 0 else {
            throw PipelinedClient.Failure(description: "could not run \(vgdb) (set FLOWMETER_VGDB): error \(spawned)")
        }
        var status: Int32 = 0
        waitpid(child, &status, 0)
        guard status == 0 else {
            throw PipelinedClient.Failure(description: "vgdb \(command) failed with status \(status)")
        }
    }

    static func failure(_ error: any Error) -> PipelinedClient.Failure {
        (error as? PipelinedClient.Failure) ?? PipelinedClient.Failure(description: "\(error)")
    }

    /// Waits (polling, bounded) until nothing is left on the producer's queue: every delivery report is in.
    static func waitForReports(_ collector: Collector, seconds: Double) throws {
        try waitFor("every delivery report", seconds: seconds) { (collector.producer?.counters.queueDepth ?? 0) == 0 }
    }

    static func waitFor(_ what: String, seconds: Double, _ condition: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() {
            guard Date() < deadline else {
                throw PipelinedClient.Failure(description: "gave up waiting for \(what) after \(seconds) s")
            }
            usleep(20_000)
        }
    }

    /// The value of an unlabelled sample in Prometheus text, or nil.
    static func sample(_ name: String, in text: String) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix(name + " ") {
            return Double(line.dropFirst(name.count + 1))
        }
        return nil
    }

    static func processCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec)
            + Double(usage.ru_stime.tv_usec) / 1e6
    }

    /// The voluntary and involuntary context switches so far of this process's live threads (each thread's
    /// `/proc/self/task/*/status`; a thread that ended takes its count with it).
    static func contextSwitches() -> (voluntary: Int, involuntary: Int) {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        var voluntary = 0
        var involuntary = 0
        for task in tasks {
            guard let status = try? String(contentsOfFile: "/proc/self/task/\(task)/status", encoding: .utf8) else {
                continue
            }
            for line in status.split(separator: "\n") {
                if line.hasPrefix("voluntary_ctxt_switches:") {
                    voluntary += Int(line.dropFirst(24).trimmingCharacters(in: .whitespaces)) ?? 0
                } else if line.hasPrefix("nonvoluntary_ctxt_switches:") {
                    involuntary += Int(line.dropFirst(27).trimmingCharacters(in: .whitespaces)) ?? 0
                }
            }
        }
        return (voluntary, involuntary)
    }

    static func threadCount() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? 0
    }
}
