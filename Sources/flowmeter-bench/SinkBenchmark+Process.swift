import FlowmeterModels
import Foundation
import IngestBenchmarks
import Kafka
import RollupStore
import Rollups
import Sink
import Synchronization
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

extension SinkBenchmark {
    /// `--only process`: a real `flowmeter sink` process under load, end to end, with its default dedupe horizon.
    ///
    /// Starts librdkafka's mock cluster in a child process (``MockClusterProcess``, `flowmeter.batches.v1` with 24
    /// partitions unless told), then `flowmeter sink --kafka … --store <temporary SQLite> --ops-listen …` (the executable beside
    /// this one), then produces `rounds` rounds of the batch records of `inputs` (each round with new batch ids, so
    /// nothing is a duplicate) as fast as the mock cluster takes them, and waits until the sink's
    /// `flowmeter_sink_events_total` says it counted every event. Prints the sink's CPU time (from /proc), events
    /// per CPU-second and wall-clock second, and its peak RSS (`VmHWM`), which is what the sink's memory bound is
    /// about: its consumer's fetch buffers, the step's aggregator and the dedupe window of every key it counted.
    ///
    /// With `pace`, rounds are produced at that many events a second (as collectors writing the topic would), not
    /// as fast as the sink takes them, and the sink's share of a core over the run says whether it keeps up: below
    /// 100 % at a collector core's rate means one sink core keeps up with one collector core.
    struct ProcessOptions {
        /// Rounds of the batches (`--rounds`, 20 by default).
        var rounds = 20
        /// Events a second the rounds are produced at (`--pace`); nil: as fast as the sink takes them.
        var pace: Int?
        /// Records the producer may run ahead of the sink (`--ahead`).
        var aheadRecords = 20_000
        /// The batches topic's partitions (`--partitions`, 24 by default: room for `aheadRecords`).
        var partitions = 24
        /// Every round produced before the sink starts (`--backlog`), so the sink runs as a sink behind does
        /// (catching up after an outage), as fast as it can, rather than at the producer's pace. Not with `pace`.
        var isBacklog = false
        /// Passed on to `flowmeter sink` (`--step-interval`, `--max-step-duration`, `--max-batch`).
        var sinkArguments: [String] = []
    }

    static func process(_ inputs: Inputs, options: ProcessOptions, label: String) throws {
        let (rounds, pace, isBacklog) = (options.rounds, options.pace, options.isBacklog)
        let directory = try TemporaryDirectory(prefix: "flowmeter-bench-sink-process")
        let cluster = try MockClusterProcess(
            executable: IngestBenchmark.siblingExecutable("flowmeter-bench"), partitions: options.partitions)
        defer { cluster.stop() }
        var configuration = KafkaProducerConfiguration(bootstrapServers: cluster.bootstrapServers)
        configuration.statisticsInterval = .zero
        if isBacklog {
            // librdkafka's mock cluster answers a fetch with at most one produced message set a partition, where a
            // broker fills the fetch (up to max.partition.fetch.bytes, 1 MiB): with the producer's usual sets of
            // one round's share (about 21 records a partition) the sink could never read a backlog as fast as from
            // a broker. Sets of up to 4 MB of records, about a broker's 1 MiB of them LZ4-compressed, let it.
            configuration.linger = .milliseconds(1_000)
            configuration.additionalProperties = ["batch.size": "4000000", "message.max.bytes": "4000000"]
        }
        let producer = try KafkaProducer(configuration: configuration)
        var records = inputs.records
        let delivered = DispatchSemaphore(value: 0)
        let failures = Mutex(0)
        let perRound = inputs.events.reduce(0, +)
        // At most `aheadRecords` records (whole rounds, at least one) ahead of the sink. 20,000 by default: what a
        // sink behind reads in one step of its --max-step-duration (2 s) at a collector core's rate (about 10,000
        // records a second of 50 events), which the mock cluster cannot produce here. The mock cluster keeps only
        // about 5 MiB a partition (LZ4-compressed) and drops the oldest records beyond that, which a sink far behind
        // would never see (the first try, everything at once on six partitions, lost 1,584 of 10,240 records): so
        // 24 partitions by default, where 20,000 of these records of 13.8 KB lose none (six partitions held 5,000).
        let ahead = max(1, options.aheadRecords / max(1, inputs.records.count))
        /// Produces round `round` of the records, each with the round in its batch ids.
        func produce(round: Int) throws {
            let digits = Array(String(format: "%08d", round).utf8)
            for index in records.indices {
                let start = inputs.roundOffsets[index]
                records[index].replaceSubrange(start..<start + 8, with: digits)
            }
            try producer.enqueueBatch(
                capacity: records.count,
                completion: { outcome in
                    failures.withLock { $0 += outcome.failures.count }
                    delivered.signal()
                }
            ) { writer in
                for (index, record) in records.enumerated() {
                    try writer.append(
                        topic: "flowmeter.batches.v1", key: Array("r\(round)-\(index)".utf8), value: record)
                }
            }
        }
        /// Waits for `rounds` rounds' delivery reports; throws when the mock cluster refused any record.
        func awaitDeliveries(_ rounds: Int) throws {
            for _ in 0..<rounds { delivered.wait() }
            guard failures.withLock({ $0 }) == 0 else {
                throw SinkError(.badRecord, "the mock cluster refused \(failures.withLock { $0 }) records")
            }
        }
        // A backlog: every round written before the sink starts, so it counts as fast as it can, its polls full.
        if isBacklog {
            for round in 1...rounds { try produce(round: round) }
            try awaitDeliveries(rounds)
        }
        let port = try ServerProcess.freeLoopbackPort()
        var arguments = [
            "sink", "--kafka", cluster.bootstrapServers.joined(separator: ","), "--store",
            directory.path + "/sink.sqlite", "--ops-listen", "127.0.0.1:\(port)", "--log-format", "logfmt",
        ]
        arguments += options.sinkArguments
        let sink = try MeasuredProcess(
            name: "flowmeter-sink", executable: IngestBenchmark.siblingExecutable("flowmeter"),
            arguments: arguments, cpu: nil, logDirectory: URL(fileURLWithPath: directory.path))
        defer { sink.stop() }
        try sink.waitUntilServing(port: port, path: "/healthz", timeout: 30)
        let idle = sink.counters()
        print(
            String(
                format: "process: flowmeter sink (pid %d) on a mock cluster, %@, %d rounds of %d records, %@; load %@",
                sink.pid, label as NSString, rounds, inputs.records.count,
                (isBacklog
                    ? "all produced before the sink started (a backlog)"
                    : pace.map { "produced at \($0) events/s" } ?? "produced as fast as the sink takes them")
                    as NSString,
                loadAverage() as NSString))
        print(String(format: "  idle: RSS peak %.1f MiB, CPU %.2f s", idle.peakRSSMiB, idle.cpuSeconds))
        fflush(nil)
        /// Waits for the sink to count `target` events; when it stops moving, prints its last warnings and errors
        /// (a record that retention removed before the sink read it is one) before rethrowing.
        @discardableResult
        func waitExplaining(_ target: Int) throws -> Int {
            do {
                return try waitForSink(port: port, events: target)
            } catch {
                let log = (try? String(contentsOf: sink.logURL, encoding: .utf8)) ?? ""
                let lines = log.split(separator: "\n")
                let problems = lines.filter { $0.contains("level=warning") || $0.contains("level=error") }
                print("  the sink's last warnings and errors (\(problems.count) in all):")
                for line in problems.suffix(8) { print("    \(line)") }
                print("  the sink's last log lines (\(lines.count) in all):")
                for line in lines.suffix(12) { print("    \(line)") }
                let metrics = HTTPConnection(host: "127.0.0.1", port: port)?.get("/metrics") ?? ""
                // What the store holds, which is what counts (the metrics are the sink's own tally).
                if let store = try? openRollupStore(url: directory.path + "/sink.sqlite") {
                    let now = Int64(Date().timeIntervalSince1970)
                    let versions =
                        (try? store.versionRollups(
                            from: Timestamp(secondsSinceEpoch: now - 3 * 86_400),
                            to: Timestamp(secondsSinceEpoch: now + 86_400), appID: nil)) ?? []
                    print("  the store holds \(versions.reduce(0) { $0 + $1.batches }) batches")
                    let watermarks = try? KafkaConsumer(
                        configuration: KafkaConsumerConfiguration(
                            bootstrapServers: cluster.bootstrapServers, groupID: "flowmeter-bench-watermarks"))
                    for partition in 0..<cluster.partitions {
                        let position = try? store.position(topic: "flowmeter.batches.v1", partition: partition)
                        let marks = try? watermarks?.watermarks(
                            topic: "flowmeter.batches.v1", partition: partition, timeout: .seconds(5))
                        print(
                            "    partition \(partition): stored next offset \(position?.nextOffset.map(String.init) ?? "none"), "
                                + "\(position?.counted.count ?? -1) batches counted, "
                                + "the cluster's offsets \(marks.map { "\($0.low)..<\($0.high)" } ?? "unknown")")
                    }
                }
                print("  the sink's metrics:")
                for line in metrics.split(separator: "\n")
                where line.hasPrefix("flowmeter_sink_") && !line.contains("_bucket") {
                    print("    \(line)")
                }
                throw error
            }
        }
        let started = Date()
        if !isBacklog {
            for round in 1...rounds {
                if let pace {
                    let due = started.addingTimeInterval(Double((round - 1) * perRound) / Double(pace))
                    let wait = due.timeIntervalSinceNow
                    if wait > 0 { usleep(useconds_t(wait * 1_000_000)) }
                }
                // The first round waits for the sink to join its group and count something: records produced
                // meanwhile would otherwise pile up past the mock cluster's retention before anyone reads them.
                try waitExplaining(round == 2 ? 1 : (round - 1 - ahead) * perRound)
                try produce(round: round)
            }
            try awaitDeliveries(rounds)
        }
        let counted = try waitExplaining(rounds * perRound)
        let wall = Date().timeIntervalSince(started)
        let loaded = sink.counters()
        // With a backlog the sink counts from its start, so its whole CPU time counts, start-up included.
        let cpu = loaded.cpuSeconds - (isBacklog ? 0 : idle.cpuSeconds)
        print(
            String(
                format:
                    "  counted %d events in %.1f s: %.0f events/CPU-s (%.1f CPU-s, %.0f%% of a core), %.0f events/s; "
                    + "RSS peak (VmHWM) %.1f MiB; load %@",
                counted, wall, Double(counted) / cpu, cpu, 100 * cpu / wall, Double(counted) / wall,
                loaded.peakRSSMiB, loadAverage() as NSString))
        let polls = Self.sinkMetric("flowmeter_sink_step_polls_total", port: port)
        let transactions = Self.sinkMetric("flowmeter_sink_commit_seconds_count", port: port)
        print(
            String(
                format: "  %d polls counted in %d store transactions (%.1f a transaction)", polls, transactions,
                Double(polls) / Double(max(1, transactions))))
    }

    /// Waits until the sink on `port` has counted at least `events` events; returns its count. Throws when the count
    /// stops moving for two minutes.
    @discardableResult
    static func waitForSink(port: UInt16, events: Int) throws -> Int {
        var counted = 0
        var lastChange = Date()
        while counted < events {
            let now = Self.sinkEvents(port: port)
            if now != counted {
                counted = now
                lastChange = Date()
            } else if Date().timeIntervalSince(lastChange) > 120 {
                throw SinkError(.badRecord, "the sink counted \(counted) of \(events) events and stopped moving")
            }
            if counted < events { usleep(50_000) }
        }
        return counted
    }

    /// `flowmeter_sink_events_total` from the sink's `/metrics` on `port`; 0 when it cannot be read.
    static func sinkEvents(port: UInt16) -> Int {
        sinkMetric("flowmeter_sink_events_total", port: port)
    }

    /// The value of the unlabelled series `name` in the sink's `/metrics` on `port`; 0 when it cannot be read.
    static func sinkMetric(_ name: String, port: UInt16) -> Int {
        guard let metrics = HTTPConnection(host: "127.0.0.1", port: port)?.get("/metrics") else { return 0 }
        for line in metrics.split(separator: "\n") where line.hasPrefix(name + " ") {
            return Int(Double(line.split(separator: " ").last ?? "0") ?? 0)
        }
        return 0
    }
}
