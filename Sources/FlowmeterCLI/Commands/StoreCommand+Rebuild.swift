import FlowmeterModels
import FlowmeterRuntime
import Foundation
import Logging
import RollupStore
import Sink

/// `flowmeter store rebuild`: a store built again from the batches topic, with progress on the terminal.
extension StoreCommand {
    static var rebuild: Command {
        Command(
            name: "rebuild",
            abstract: "Build an empty store from the batches topic, from its beginning, with the sink's own code.",
            discussion: """
                Reads every partition of --batches-topic from the oldest record Kafka still holds to the end offset
                it had when the rebuild began, exactly as 'flowmeter sink' does (copies within --dedupe-horizon
                skipped, one fenced store transaction per step), then stops; the deploys and manifests topics are
                read too. Records written meanwhile are left for the sink that runs on the store afterwards: it
                continues from the offsets the rebuild stored. Use it after a lost database or after a fix to how
                rollups are built; the store is complete only if the topic's retention still holds everything the
                store should count (see docs/sink.md). Progress (records read per partition against its end
                offset, batches counted, copies skipped, rate and time left) goes to standard error every 2 s
                unless --quiet; the totals go to standard output at the end. The store must be empty: with --force
                a store that holds rows is written into as it is (partitions it holds an offset for continue from
                there, the others are read from their beginning, and rollups add to the rows already there).
                The rebuild uses a consumer group of its own, so running sinks are not disturbed; stop them first
                when they write the same store. Exit status: 0 done, 1 error, 2 usage error.
                """,
            options: [
                SharedOptions.configFile,
                .value("kafka", "HOST:PORT[,…]", help: "Bootstrap servers."),
                SharedOptions.store,
            ] + SharedOptions.sinkReading + [
                .flag("force", help: "Write into a store that is not empty (see above)."),
                .flag("quiet", help: "No progress lines; only the totals at the end."),
            ],
            run: { arguments in try await runRebuild(arguments) }
        )
    }

    private static func runRebuild(_ arguments: ParsedArguments) async throws -> Int32 {
        let configuration = try SharedOptions.sinkConfiguration(arguments)
        let force = arguments.flag("force")
        let quiet = arguments.flag("quiet")
        let output = arguments.output
        let storeURL = try arguments.required("store")
        let logger = Logger(threshold: .warning, format: .logfmt)
        let store = try SharedOptions.openStore(arguments)
        let chosen = configuration
        let final = try await QueryOptions.read { () throws -> StoreRebuild.Progress? in
            if let held = try heldRows(store), !force {
                output.printError(
                    "error: the store \(storeURL) is not empty (\(held)); a rebuild writes into an empty store.\n"
                        + "With --force it would write into it as it is: partitions the store holds an offset for "
                        + "continue from there, the others are read from the oldest record of \(chosen.batchesTopic), "
                        + "and their rollups add to the rows already there (counting twice what those rows already "
                        + "count). To rebuild, point --store at a new file or an empty database.")
                return nil
            }
            let rebuild = try StoreRebuild(configuration: chosen, store: store, log: RollupSink.log(to: logger))
            if !quiet { output.printError(startLine(rebuild.start, topic: chosen.batchesTopic)) }
            return try rebuild.run { progress in
                if !quiet { output.printError(progressLines(progress)) }
            }
        }
        guard let final else { return 1 }
        let counters = final.counters
        output.print(
            "rebuilt \(storeURL) from \(configuration.batchesTopic): \(CellFormat.count(final.consumed)) records in "
                + "\(final.partitions.count) partitions, \(CellFormat.count(Int64(counters.applied))) batches counted, "
                + "\(CellFormat.count(Int64(counters.duplicates))) copies skipped, "
                + "\(CellFormat.count(Int64(counters.events))) events, "
                + "\(CellFormat.count(Int64(counters.badMessages))) records dead-lettered, "
                + "\(counters.deploys) deploys, \(counters.manifests) manifests, in \(seconds(final.elapsed)).")
        return 0
    }

    /// A description of the rows `store` holds (such as `12 rows in series_minutes`), or nil when it is empty.
    private static func heldRows(_ store: any RollupStore) throws -> String? {
        guard let maintained = store as? any RollupStoreMaintenance else { return nil }
        // The schema's own bookkeeping is in every store, empty or not.
        let held = try maintained.stats().tables.filter { $0.rows > 0 && $0.name != "schema_version" }
        guard !held.isEmpty else { return nil }
        return held.map { "\(CellFormat.count($0.rows)) rows in \($0.name)" }.joined(separator: ", ")
    }

    private static func startLine(_ partitions: [StoreRebuild.Partition], topic: String) -> String {
        let total = partitions.reduce(Int64(0)) { $0 + $1.total }
        var line =
            "rebuilding from \(topic): \(partitions.count) partitions, \(CellFormat.count(total)) records up to the "
            + "end offsets seen now"
        let trimmed = partitions.filter { $0.low > 0 }
        if !trimmed.isEmpty {
            line +=
                "; retention already removed the records before offset "
                + trimmed.map { "\($0.low) of partition \($0.partition)" }.joined(separator: ", ")
        }
        return line
    }

    /// One summary line and one line per partition.
    static func progressLines(_ progress: StoreRebuild.Progress) -> String {
        let counters = progress.counters
        let percent = progress.total > 0 ? Double(progress.consumed) / Double(progress.total) * 100 : 100
        var summary =
            "\(CellFormat.count(progress.consumed))/\(CellFormat.count(progress.total)) records ("
            + String(format: "%.1f", percent) + "%), \(CellFormat.count(Int64(counters.applied))) batches counted, "
            + "\(CellFormat.count(Int64(counters.duplicates))) copies skipped"
        if let rate = progress.rate { summary += ", " + CellFormat.count(Int64(rate.rounded())) + " records/s" }
        if progress.isDone {
            summary += ", done in \(seconds(progress.elapsed))"
        } else if let remaining = progress.remaining {
            summary += ", about \(seconds(remaining)) left"
        }
        let lines = progress.partitions.map { partition in
            "  partition \(partition.partition): offset \(partition.position) of \(partition.end)"
                + (partition.isDone ? " (done)" : "")
        }
        return ([summary] + lines).joined(separator: "\n")
    }

    private static func seconds(_ duration: Duration) -> String {
        let total = Int((duration / .seconds(1)).rounded())
        return total >= 60 ? "\(total / 60)m\(String(format: "%02d", total % 60))s" : "\(total)s"
    }
}
