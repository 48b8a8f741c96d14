import FlowmeterModels
import FlowmeterWire
import Foundation
import RollupStore
import Rollups
import Sink
import TestSupport

/// `flowmeter-bench sink`: records and events per CPU-second of the sink's step on the ingest benchmark's batches
/// (`SyntheticBatches`, seed 42, as `flowmeter-bench ingest` and `rollups` use), one thread, beside the collector's
/// own per-batch work on the same batches.
///
/// Each batch is decoded as the collector decodes it and written as its `flowmeter.batches.v1` record
/// (``BatchRecordWriter``, one part: 50 events). Rows, each for `--seconds` of CPU time:
/// - `collector decode+write`: the collector's per-batch core, `FastBatchDecoder.decodeCompact` and the record's
///   bytes (no HTTP, gzip, normalization or Kafka: the ceiling the collector's events per CPU-second approach).
/// - `sink decode`: ``BatchRecordDecoder`` alone; `sink decode (Codable)`: the reference, `JSONDecoder`.
/// - `sink aggregate`: ``RollupAggregator`` alone (records decoded beforehand, a new aggregator per step of
///   `--records-per-step`, drained), in memory.
/// - `sink step (SQLite)`: the whole step, ``PartitionSteps`` `makeStep` + `commit` (decode, dedupe, aggregate,
///   one store transaction with the rollups, the counted batches and the offset) on a fresh SQLite store. Every
///   round gives each record a new batch id (patched in place), so nothing is a duplicate. Its batches are spread
///   over a day with events up to 10 minutes apart, so nearly every event is a series-minute of its own: the worst
///   case for the store.
/// - `sink step (SQLite), recent`: the same step on batches of the same kind as a live log holds them
///   (``Inputs/recentBodies(count:now:)``): received in time order over a minute, each event at most two minutes
///   before its batch's receipt, so a step's events fall into a few minutes and merge into the rows of the minutes
///   around now.
///
/// `--only process` runs a real `flowmeter sink` process on a mock cluster instead and reports its peak RSS
/// (``process(_:options:label:)``; `--rounds` rounds of the batches, 20 by default; `--events-per-batch 1` and
/// enough rounds fill the dedupe window to its bound).
///
/// `--store` takes a store URL (`postgres://…` for PostgreSQL); the step row names the store it ran on.
///
/// `--only dedupe` measures the dedupe horizon's cost instead: `--rate` batches a second of log time for
/// `--log-seconds` (default 1,000 for 3,600 s, the default horizon), each batch's key admitted into one partition's
/// ``DedupeWindow`` bounded at `--max-entries` (default the sink's 2,000,000, one partition holding it all) and committed a second at a time
/// as the sink's steps write it: the keys remembered, the process's RSS before and after, the keys forgotten early
/// by the bound, and the `counted_batches` rows and bytes the store holds at the end (`--store none`: the memory
/// alone, nothing committed).
///
/// CPU time is the process's (`CLOCK_PROCESS_CPUTIME_ID`; the bench runs one thread); RSS is read from /proc after
/// each row.
enum SinkBenchmark {
    static let usage = """
        usage: flowmeter-bench sink [--seconds N (4)] [--batches N (512)] [--events-per-batch N (50)]
                                    [--records-per-step N (500)]
                                    [--only collector|decode|codable|aggregate|step|recent|dedupe|process]
                                    [--recent (with --only process: the recent batches, as a live log holds them)]
                                    [--backlog (with --only process: every round produced before the sink starts,
                                     which then counts as fast as it can, as a sink catching up does; keep the
                                     rounds' records within what --partitions hold, 20,000 for 24)]
                                    [--pace N (with --only process: produce N events a second, as collectors would,
                                     instead of as fast as the sink takes them)] [--ahead N (20000): records the
                                     producer may run ahead of the sink: a 2 s step at a collector core's rate]
                                    [--store URL (a temporary SQLite; postgres://… for PostgreSQL)]
                                    [--rounds N (run each row N rounds instead of --seconds: for callgrind)]
                                    [--sqlite-cache-kib N (SQLite's 2048: the writer's page cache)]
                                    [--step-interval D (with --only process: the sink's --step-interval)]
                                    [--max-step-duration D (with --only process: the sink's --max-step-duration)]
                                    [--max-batch N (with --only process: the sink's --max-batch)]
                                    [--partitions N (24; with --only process: the batches topic's partitions; the
                                     mock cluster keeps about 5 MiB a partition, so --ahead needs enough of them)]
                                    [--postgres-unprepared (PostgreSQL parses every statement on every run)]
                                    [--rate N (1000) --log-seconds N (3600) --max-entries N (2000000): dedupe]
        """

    static func run(_ arguments: [String]) -> Int32 {
        var seconds = 4.0
        var batchCount = 512
        var eventsPerBatch = 50
        var perStep = 500
        var only: String?
        var isRecent = false
        var storePath: String?
        var rounds: Int?
        var rate = 1_000
        var logSeconds = 3_600
        var maxEntries = RollupSinkConfiguration(bootstrapServers: []).dedupeMaxEntries
        var storeOptions = RollupStoreOptions()
        var process = ProcessOptions()
        var index = 0
        while index < arguments.count {
            let value = index + 1 < arguments.count ? arguments[index + 1] : ""
            switch arguments[index] {
            case "--seconds": seconds = Double(value) ?? 0
            case "--batches": batchCount = Int(value) ?? 0
            case "--events-per-batch": eventsPerBatch = Int(value) ?? 0
            case "--records-per-step": perStep = Int(value) ?? 0
            case "--only": only = value
            case "--store": storePath = value
            case "--rounds": rounds = Int(value) ?? 0
            case "--rate": rate = Int(value) ?? 0
            case "--pace": process.pace = Int(value) ?? 0
            case "--ahead": process.aheadRecords = Int(value) ?? 0
            case "--log-seconds": logSeconds = Int(value) ?? 0
            case "--max-entries": maxEntries = Int(value) ?? 0
            case "--sqlite-cache-kib": storeOptions.sqliteWriterCacheKiB = Int(value) ?? 0
            case "--step-interval", "--max-step-duration", "--max-batch":
                process.sinkArguments += [arguments[index], value]
            case "--partitions": process.partitions = Int(value) ?? 0
            case "--recent":
                isRecent = true
                index -= 1
            case "--backlog":
                process.isBacklog = true
                index -= 1
            case "--postgres-unprepared":
                storeOptions.postgresPreparesAfter = nil
                index -= 1
            default:
                print(usage)
                return 2
            }
            index += 2
        }
        guard
            seconds > 0, batchCount > 0, eventsPerBatch > 0, perStep > 0, rounds.map({ $0 > 0 }) ?? true,
            process.pace.map({ $0 > 0 }) ?? true, process.aheadRecords > 0, process.partitions > 0
        else {
            print(
                "error: --seconds, --batches, --records-per-step, --rounds, --pace, --ahead and --partitions must be "
                    + "positive")
            return 2
        }
        guard !process.isBacklog || process.pace == nil else {
            print(
                "error: --backlog produces every round before the sink starts; --pace paces them as it runs: one of them"
            )
            return 2
        }
        if let rounds { process.rounds = rounds }
        fixedRounds = rounds
        Self.storeOptions = storeOptions
        if only == "dedupe" {
            guard rate > 0, logSeconds > 0, maxEntries > 0 else {
                print("error: --rate, --log-seconds and --max-entries must be positive")
                return 2
            }
            do {
                try dedupe(rate: rate, logSeconds: logSeconds, maxEntries: maxEntries, storePath: storePath)
                return 0
            } catch {
                print("error: \(error)")
                return 1
            }
        }
        do {
            let inputs = try Inputs(batchCount: batchCount, eventsPerBatch: eventsPerBatch, recent: isRecent)
            if only == "process" {
                try Self.process(
                    inputs, options: process,
                    label: "\(batchCount) \(isRecent ? "recent" : "distinct") batches of \(eventsPerBatch) events")
                return 0
            }
            let recent = only == nil || only == "recent" ? try Inputs(batchCount: batchCount, recent: true) : nil
            print(
                "sink: \(batchCount) distinct batches of \(eventsPerBatch) events as batch records (\(inputs.meanRecordBytes) bytes "
                    + "on average); \(perStep) records a step; \(seconds) s of CPU a row; load \(loadAverage())")
            print(
                "row                              records/CPU-s   events/CPU-s   ns/event   RSS MiB (peak)")
            let rows: [(String, String, () throws -> Measurement)] = [
                ("collector", "collector decode+write", { try collector(inputs, seconds: seconds) }),
                ("decode", "sink decode", { try decode(inputs, seconds: seconds) }),
                ("codable", "sink decode (Codable)", { try codable(inputs, seconds: seconds) }),
                ("aggregate", "sink aggregate", { try aggregate(inputs, seconds: seconds, perStep: perStep) }),
                (
                    "step", "sink step (\(storeName(storePath)))",
                    {
                        try step(inputs, seconds: seconds, perStep: perStep, storePath: storePath)
                    }
                ),
                (
                    "recent", "sink step (\(storeName(storePath))), recent",
                    {
                        try step(recent!, seconds: seconds, perStep: perStep, storePath: storePath)
                    }
                ),
            ]
            for (key, label, body) in rows where only == nil || only == key {
                let measured = try body()
                let memory = residentMiB()
                print(
                    String(
                        format: "%-32@ %14.0f %14.0f %10.1f   %6.1f (%.1f)", label as NSString,
                        measured.recordsPerCPUSecond, measured.eventsPerCPUSecond,
                        1e9 / measured.eventsPerCPUSecond, memory.current, memory.peak))
            }
            return 0
        } catch {
            print("error: \(error)")
            return 1
        }
    }

    /// The batches as the collector decodes them and their records.
    struct Inputs {
        var bodies: [[UInt8]]
        var records: [[UInt8]]
        var events: [Int]
        /// Where each record's batch id's round digits start (`r00000000-…`).
        var roundOffsets: [Int]

        var meanRecordBytes: Int { records.reduce(0) { $0 + $1.count } / max(1, records.count) }

        /// With `recent`, the batches as a live log holds them (``recentBodies(count:now:)``): received in time order
        /// over ``recentSpanSeconds``, each event within ``recentLagSeconds`` before its batch's receipt.
        init(batchCount: Int, eventsPerBatch: Int = 50, recent: Bool = false) throws {
            let now = Timestamp(Date())
            bodies =
                recent
                ? Self.recentBodies(count: batchCount, now: now)
                : SyntheticBatches.batches(count: batchCount, seed: 42, eventsPerBatch: eventsPerBatch)
            var interner = StringInterner(slots: 1_024)
            records = []
            events = []
            roundOffsets = []
            for (number, body) in bodies.enumerated() {
                let decoded = try FastBatchDecoder.decodeCompact(body, interner: &interner)
                let receivedAt = recent ? Self.recentReceipt(number, of: batchCount, now: now) : now
                let record = SinkBenchmark.record(
                    decoded, batchID: String(format: "r%08d-%05d", 0, number), receivedAt: receivedAt)
                let marker = Array(#""batchID":"r"#.utf8)
                guard let offset = record.firstRange(of: marker)?.upperBound else {
                    throw SinkError(.badRecord, "no batch id in a written record")
                }
                records.append(record)
                events.append(decoded.table.count)
                roundOffsets.append(offset)
            }
        }

        /// Seconds of receipt time the recent batches span, in order.
        static let recentSpanSeconds: Int64 = 60
        /// The most an event's `occurredAt` lies before its batch's receipt, in seconds.
        static let recentLagSeconds = 120

        /// When recent batch `number` of `count` was received: spread evenly over the ``recentSpanSeconds`` before
        /// `now`.
        static func recentReceipt(_ number: Int, of count: Int, now: Timestamp) -> Timestamp {
            let offset = recentSpanSeconds * Int64(count - number) / Int64(max(1, count))
            return Timestamp(secondsSinceEpoch: now.secondsSinceEpoch - offset, nanoseconds: 0)
        }

        /// The ingest benchmark's kind of batch (`SyntheticBatches.batchValue`, seeds 42, 43, …) as a live log
        /// holds them rather than spread over a day: sent when received (``recentReceipt(_:of:now:)``), every event
        /// within ``recentLagSeconds`` before that, so a step's events fall into the few minutes around now.
        static func recentBodies(count: Int, now: Timestamp) -> [[UInt8]] {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.withoutEscapingSlashes]
            var random = SeededRandom(seed: 7)
            return (0..<count).map { number in
                var batch = SyntheticBatches.batchValue(seed: 42 + UInt64(number))
                let receivedAt = recentReceipt(number, of: count, now: now)
                batch.sentAt = receivedAt
                for index in batch.events.indices {
                    let lag = Int64(Int.random(in: 0..<recentLagSeconds, using: &random))
                    batch.events[index].occurredAt = Timestamp(
                        secondsSinceEpoch: receivedAt.secondsSinceEpoch - lag,
                        nanoseconds: Int32(Int.random(in: 0..<1_000, using: &random)) * 1_000_000)
                }
                // Encoding a value built from plain strings cannot fail.
                return Array(try! encoder.encode(batch))
            }
        }
    }

    /// The batch record (part 0) the collector writes for `decoded`.
    static func record(_ decoded: CompactBatch, batchID: String, receivedAt: Timestamp) -> [UInt8] {
        var client = decoded.header.client
        let installHash = client.installID.map(RollupsBenchmark.pseudonym)
        client.installID = nil
        let writer = BatchRecordWriter(
            batch: BatchRecordWriter.Batch(
                batchID: batchID, client: client, installHash: installHash, decodes: decoded.header.decodes,
                clientReport: decoded.header.clientReport, receivedAt: receivedAt, skewMillis: 0,
                collector: "bench", dropped: decoded.dropped.count),
            table: decoded.table, positions: Array(decoded.table.events.indices), maxRecordBytes: 1_000_000)
        var bytes = [UInt8](repeating: 0, count: writer.maxLength(part: 0))
        let length = bytes.withUnsafeMutableBytes { writer.write(part: 0, into: $0) }
        bytes.removeSubrange(length...)
        return bytes
    }

    struct Measurement {
        var records: Int
        var events: Int
        var cpuSeconds: Double

        var recordsPerCPUSecond: Double { Double(records) / cpuSeconds }
        var eventsPerCPUSecond: Double { Double(events) / cpuSeconds }
    }

    /// Runs `round` (which returns the records and events it did) until `seconds` of CPU time have passed.
    static func measure(seconds: Double, _ round: () throws -> (records: Int, events: Int)) rethrows -> Measurement {
        let start = cpuSeconds()
        var records = 0
        var events = 0
        var rounds = 0
        while true {
            let done = try round()
            records += done.records
            events += done.events
            rounds += 1
            if let fixedRounds { if rounds >= fixedRounds { break } } else if cpuSeconds() - start >= seconds { break }
        }
        return Measurement(records: records, events: events, cpuSeconds: cpuSeconds() - start)
    }

    static func collector(_ inputs: Inputs, seconds: Double) throws -> Measurement {
        var interner = StringInterner(slots: 1_024)
        var storage = EventTableStorage()
        let scratch = EscapedTable()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        let receivedAt = Timestamp(Date())
        var written = 0
        let result = try measure(seconds: seconds) {
            var events = 0
            for body in inputs.bodies {
                let decoded = try FastBatchDecoder.decodeCompact(body, interner: &interner, storage: storage)
                var client = decoded.header.client
                client.installID = nil
                let writer = BatchRecordWriter(
                    batch: BatchRecordWriter.Batch(
                        batchID: decoded.header.id ?? "bench", client: client, installHash: "0123456789abcdef",
                        decodes: decoded.header.decodes, clientReport: decoded.header.clientReport,
                        receivedAt: receivedAt, skewMillis: 0, collector: "bench", dropped: 0),
                    table: decoded.table, positions: Array(decoded.table.events.indices), maxRecordBytes: 1_000_000,
                    scratch: scratch)
                for part in writer.parts.indices {
                    if buffer.count < writer.maxLength(part: part) {
                        buffer = [UInt8](repeating: 0, count: writer.maxLength(part: part))
                    }
                    written &+= buffer.withUnsafeMutableBytes { writer.write(part: part, into: $0) }
                }
                events += decoded.table.count
                storage = decoded.table.storage
            }
            return (inputs.bodies.count, events)
        }
        precondition(written > 0)
        return result
    }

    static func decode(_ inputs: Inputs, seconds: Double) throws -> Measurement {
        var decoder = BatchRecordDecoder()
        return try measure(seconds: seconds) {
            var events = 0
            for record in inputs.records { events += try decoder.decode(record).table.count }
            return (inputs.records.count, events)
        }
    }

    static func codable(_ inputs: Inputs, seconds: Double) throws -> Measurement {
        try measure(seconds: seconds) {
            var events = 0
            for record in inputs.records { events += try BatchRecord(jsonBytes: record).events.count }
            return (inputs.records.count, events)
        }
    }

    static func aggregate(_ inputs: Inputs, seconds: Double, perStep: Int) throws -> Measurement {
        var decoder = BatchRecordDecoder()
        let decoded = try inputs.records.map { record throws(SinkError) in try decoder.decode(record) }
        var next = 0
        return measure(seconds: seconds) {
            let aggregator = RollupAggregator(
                configuration: .init(collectorID: "sink", bootID: "0", shardCount: 1, maxEntries: 50_000_000))
            var events = 0
            for _ in 0..<perStep {
                let batch = decoded[next]
                next = (next + 1) % decoded.count
                let isFirst = batch.part == 0
                aggregator.record(
                    batch.table, client: batch.client, decodes: isFirst ? batch.decodes : 0,
                    installHash: batch.installHash, receivedAt: batch.receivedAt, droppedEvents: batch.dropped,
                    clientDiscarded: isFirst ? batch.clientReport?.totalEvents ?? 0 : 0, isContinuation: !isFirst)
                events += batch.table.count
            }
            _ = aggregator.drain()
            return (perStep, events)
        }
    }

    static func step(_ inputs: Inputs, seconds: Double, perStep: Int, storePath: String?) throws -> Measurement {
        let directory = try TemporaryDirectory(prefix: "flowmeter-bench-sink")
        let store = try openRollupStore(url: storePath ?? directory.path + "/sink.sqlite", options: storeOptions)
        let topic = "flowmeter.batches.v1"
        let steps = PartitionSteps(topic: topic, store: store, horizon: .seconds(3600), maxEntries: 2_000_000)
        var records = inputs.records
        var next = 0
        var round = 0
        var offset: Int64 = try steps.storedOffset(partition: 0) ?? 0
        var rollupRows = 0
        var stepCount = 0
        defer {
            let rows = rollupRows / max(1, stepCount)
            print("  (\(rows) series and version rollups a step on average, \(stepCount) steps)")
        }
        return try measure(seconds: seconds) {
            var values: [(offset: Int64, value: [UInt8])] = []
            values.reserveCapacity(perStep)
            var events = 0
            for _ in 0..<perStep {
                if next == 0 {
                    // A new round: every record gets a batch id no step has counted.
                    round += 1
                    let digits = Array(String(format: "%08d", round).utf8)
                    for index in records.indices {
                        let start = inputs.roundOffsets[index]
                        records[index].replaceSubrange(start..<start + 8, with: digits)
                    }
                }
                values.append((offset, records[next]))
                events += inputs.events[next]
                offset += 1
                next = (next + 1) % records.count
            }
            let made = try steps.makeStep(partition: 0, partitions: 1, records: values, caughtUpAt: nil)
            precondition(made.outcome.counted == perStep, "sink bench: \(made.outcome) (duplicates or bad records)")
            rollupRows += made.step.series.count + made.step.versions.count
            stepCount += 1
            try steps.commit(made.step)
            return (perStep, events)
        }
    }

    /// The store a `--store` URL names, for the step row's label.
    static func storeName(_ url: String?) -> String {
        guard let url else { return "SQLite" }
        return url.hasPrefix("postgres") ? "PostgreSQL" : "SQLite"
    }

    /// `--only dedupe`: what the dedupe horizon holds at `rate` batches a second of log time (see the type's doc).
    static func dedupe(rate: Int, logSeconds: Int, maxEntries: Int, storePath: String?) throws {
        let directory = try TemporaryDirectory(prefix: "flowmeter-bench-dedupe")
        // `--store none`: the memory alone, nothing committed.
        let store = storePath == "none" ? nil : try openRollupStore(url: storePath ?? directory.path + "/sink.sqlite")
        let horizon: Int64 = 3_600
        print(
            "dedupe: \(rate) batches/s of log time for \(logSeconds) s, horizon \(horizon) s, at most "
                + "\(maxEntries) keys over the sink, store \(storePath == "none" ? "none" : storeName(storePath)); "
                + "load \(loadAverage())")
        let before = residentMiB().current
        let started = cpuSeconds()
        var window = DedupeWindow(horizonSeconds: horizon, maxEntries: maxEntries)
        let topic = "flowmeter.batches.v1"
        let start: Int64 = 1_800_000_000
        var unchecked = 0
        var storeSeconds = 0.0
        for second in 0..<Int64(logSeconds) {
            let receivedAt = start + second
            var counted: [CountedBatch] = []
            counted.reserveCapacity(rate)
            for number in 0..<rate {
                let key = BatchRecord.key(appID: "com.example.app", batchID: "b\(second)-\(number)", part: 0)
                if window.isForgottenEarly(receivedAt: receivedAt) { unchecked += 1 }
                if window.admit(key, receivedAt: receivedAt) {
                    counted.append(CountedBatch(key: key, receivedAt: receivedAt))
                }
            }
            guard let store else { continue }
            let committing = cpuSeconds()
            try store.commit(
                PartitionStep(
                    topic: topic, partition: 0, partitions: 1, startOffset: second == 0 ? nil : second * Int64(rate),
                    nextOffset: (second + 1) * Int64(rate), counted: counted,
                    forgetBefore: window.forgetBefore == .min ? 0 : window.forgetBefore))
            storeSeconds += cpuSeconds() - committing
        }
        let after = residentMiB()
        let held = window.newest - max(window.forgetBefore, window.newest - horizon)
        print(
            String(
                format: "keys remembered %d (%lld s of log time), forgotten early %d, unchecked %d",
                window.count, held, window.evicted, unchecked))
        print(
            String(
                format: "RSS %.1f MiB before, %.1f MiB after (peak %.1f): %.0f bytes a remembered key",
                before, after.current, after.peak, (after.current - before) * 1_048_576 / Double(max(1, window.count))))
        guard let store else {
            print(String(format: "CPU %.1f s, nothing committed (--store none)", cpuSeconds() - started))
            return
        }
        print(
            String(
                format: "CPU %.1f s, of it the store's commits %.1f s (%.0f counted keys a CPU-second)",
                cpuSeconds() - started, storeSeconds, Double(rate * logSeconds) / storeSeconds))
        if let maintained = store as? any RollupStoreMaintenance {
            let stats = try maintained.stats()
            for table in stats.tables where table.name == "counted_batches" {
                print(
                    "store: \(table.name) \(table.rows) rows, "
                        + (table.bytes.map {
                            String(
                                format: "%.1f MiB (%.0f bytes a row)", Double($0) / 1_048_576,
                                Double($0) / Double(max(1, table.rows)))
                        } ?? "bytes unknown")
                        + String(format: "; the whole store %.1f MiB", Double(stats.totalBytes) / 1_048_576))
            }
        }
    }

    /// The step rows' store options (`--sqlite-cache-kib`: the SQLite writer's page cache; `--postgres-unprepared`).
    nonisolated(unsafe) static var storeOptions = RollupStoreOptions()

    /// With `--rounds`, how many rounds each row runs, whatever the time.
    nonisolated(unsafe) static var fixedRounds: Int?

    /// CPU time of the process (every thread), in seconds.
    static func cpuSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// VmRSS and VmHWM of this process, in MiB.
    static func residentMiB() -> (current: Double, peak: Double) {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return (0, 0) }
        func value(_ name: String) -> Double {
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }) else { return 0 }
            return (Double(line.split(separator: " ").dropFirst().first ?? "0") ?? 0) / 1024
        }
        return (value("VmRSS"), value("VmHWM"))
    }

    /// The 1-minute load average, for the figures' context.
    static func loadAverage() -> String {
        (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").prefix(3).joined(
            separator: " ") ?? "?"
    }
}
