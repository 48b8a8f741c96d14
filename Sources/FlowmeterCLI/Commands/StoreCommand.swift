import Detector
import FlowmeterModels
import Foundation
import RollupStore
import Rollups

/// `flowmeter store prune|stats|rebuild`: retention by hand, what the store holds, and a store built again from the log.
enum StoreCommand {
    static var command: Command {
        Command(
            name: "store",
            abstract: "Prune the store by its retention, show its size and span, or rebuild it from the batches topic.",
            subcommands: [prune, stats, rebuild]
        )
    }

    private static var prune: Command {
        Command(
            name: "prune",
            abstract: "Delete rows older than the retention keeps, in bounded batches, and reclaim the space.",
            discussion: """
                Minute rows older than --keep-minutes are deleted (their hour rows stay, and queries over that range
                read them and say so), hour rows older than --keep-hours, applied message ids after their own 7 days;
                --batch-rows at a time, each batch its own transaction, so a sink writing meanwhile is not held up.
                A running sink does the same every --prune-interval. SQLite files made by this build return the
                freed pages to the file system as they go; an older file reuses them but does not shrink until
                --vacuum rewrites it once (that needs the store to itself, and as much free disk as the file).
                Exit status: 0 done, 1 error, 2 usage error.
                """,
            options: [SharedOptions.store] + SharedOptions.keep + [
                .value("batch-rows", "N", help: "Most rows one delete removes.", default: "5000"),
                .flag("vacuum", help: "First rewrite an older SQLite file so that it can shrink."),
                .value("format", "FORMAT", help: "table | json.", default: "table"),
            ],
            run: { arguments in try await runPrune(arguments) }
        )
    }

    private static var stats: Command {
        Command(
            name: "stats",
            abstract: "Rows and bytes per table, the oldest and newest window, retention and freshness.",
            discussion: "Exit status: 0, 1 error, 2 usage error.",
            options: [SharedOptions.store, .value("format", "FORMAT", help: "table | json.", default: "table")],
            run: { arguments in try await runStats(arguments) }
        )
    }

    private static func format(_ arguments: ParsedArguments) throws(CommandUsageError) -> OutputFormat {
        let format = try OutputFormat.parse(arguments)
        guard format != .csv else {
            throw CommandUsageError(
                "invalid value 'csv' for --format: expected table or json", commandPath: arguments.commandPath)
        }
        return format
    }

    private static func maintained(_ arguments: ParsedArguments) throws -> any RollupStoreMaintenance {
        guard let store = try QueryOptions.openStore(arguments) as? any RollupStoreMaintenance else {
            throw CommandError(.unreadableInput, "this store cannot be pruned")
        }
        return store
    }

    private static func runPrune(_ arguments: ParsedArguments) async throws -> Int32 {
        let format = try format(arguments)
        var policy = try SharedOptions.retentionPolicy(arguments)
        policy.batchRows =
            try arguments.parsed("batch-rows", as: "a positive integer") { Int($0).flatMap { $0 > 0 ? $0 : nil } }
            ?? 5_000
        let vacuum = arguments.flag("vacuum")
        let store = try maintained(arguments)
        let chosen = policy
        let (converted, report, stats) = try await QueryOptions.read {
            let converted = vacuum ? try store.enableIncrementalReclaim() : false
            let report = try store.prune(chosen, now: Timestamp(Date()), shouldContinue: { true })
            return (converted, report, try store.stats())
        }
        let output = arguments.output
        switch format {
        case .json:
            output.print(
                JSONValue.object([
                    ("minuteRows", .integer(Int64(report.minuteRows))), ("hourRows", .integer(Int64(report.hourRows))),
                    ("appliedIDs", .integer(Int64(report.appliedIDs))), ("batches", .integer(Int64(report.batches))),
                    ("reclaimedPages", report.reclaimedPages.map { .integer(Int64($0)) } ?? .null),
                    ("rewritten", .bool(converted)),
                    ("minutesBefore", .string(report.minutesBefore.rfc3339String)),
                    ("hoursBefore", .string(report.hoursBefore.rfc3339String)),
                    ("totalBytes", .integer(stats.totalBytes)),
                    ("freeBytes", stats.freeBytes.map { .integer($0) } ?? .null),
                ]).serialized(prettyPrinted: true))
        case .table, .csv:
            var lines: [String] = []
            if converted { lines.append("rewrote the SQLite file: from now on pruning returns free pages as it goes") }
            var line =
                "deleted \(CellFormat.count(Int64(report.minuteRows))) minute rows, "
                + "\(CellFormat.count(Int64(report.hourRows))) hour rows and "
                + "\(CellFormat.count(Int64(report.appliedIDs))) applied ids in \(report.batches) batches"
            if let pages = report.reclaimedPages { line += "; returned \(CellFormat.count(Int64(pages))) free pages" }
            lines.append(line + ".")
            lines.append(
                "kept: minutes from \(CellFormat.time(report.minutesBefore)) UTC, hours from "
                    + "\(CellFormat.time(report.hoursBefore)) UTC; the store is now \(bytes(stats.totalBytes)).")
            output.print(lines.joined(separator: "\n"))
        }
        if stats.reclaimsIncrementally == false, let free = stats.freeBytes, free > 0 {
            output.printError(
                "note: this SQLite file was made before incremental vacuum: its \(bytes(free)) of free pages are "
                    + "reused but the file does not shrink; run 'flowmeter store prune --vacuum' once (it rewrites the "
                    + "file and needs the store to itself)")
        }
        return 0
    }

    private static func runStats(_ arguments: ParsedArguments) async throws -> Int32 {
        let format = try format(arguments)
        let store = try maintained(arguments)
        let (stats, freshness) = try await QueryOptions.read {
            (try store.stats(), try FreshnessNote.load(store, window: nil))
        }
        let output = arguments.output
        func stamp(_ timestamp: Timestamp?) -> JSONValue { timestamp.map { .string($0.rfc3339String) } ?? .null }
        switch format {
        case .json:
            let tables: [JSONValue] = stats.tables.map { table in
                .object([
                    ("name", .string(table.name)), ("rows", .integer(table.rows)),
                    ("bytes", table.bytes.map { .integer($0) } ?? .null),
                    ("oldestWindow", stamp(table.oldestWindow)), ("newestWindow", stamp(table.newestWindow)),
                ])
            }
            let json = JSONValue.object([
                ("tables", .array(tables)), ("totalBytes", .integer(stats.totalBytes)),
                ("freeBytes", stats.freeBytes.map { .integer($0) } ?? .null),
                ("reclaimsIncrementally", stats.reclaimsIncrementally.map { .bool($0) } ?? .null),
                ("schemaVersion", .integer(stats.schemaVersion)),
            ])
            output.print(freshness.appended(to: json).serialized(prettyPrinted: true))
        case .table, .csv:
            var table = TextTable(columns: [
                .text("TABLE"), .number("ROWS"), .number("BYTES"), .text("OLDEST"), .text("NEWEST"),
            ])
            for row in stats.tables {
                table.append([
                    row.name, CellFormat.count(row.rows), row.bytes.map(bytes) ?? "-",
                    row.oldestWindow.map(CellFormat.time) ?? "-", row.newestWindow.map(CellFormat.time) ?? "-",
                ])
            }
            var footer = "total \(bytes(stats.totalBytes))"
            if let free = stats.freeBytes { footer += ", \(bytes(free)) free" }
            switch stats.reclaimsIncrementally {
            case true?: footer += "; free pages are returned as retention prunes"
            case false?: footer += "; free pages are reused, not returned (see 'flowmeter store prune --vacuum')"
            case nil: break
            }
            footer += "; schema \(stats.schemaVersion)."
            let retention = stats.retention
            let kept =
                retention.minutesBefore == nil && retention.hoursBefore == nil
                ? "retention has removed nothing yet."
                : "retention: minutes kept from \(retention.minutesBefore.map(CellFormat.time) ?? "the start"), hours "
                    + "from \(retention.hoursBefore.map(CellFormat.time) ?? "the start") (UTC)."
            output.print(
                [table.rendered(style: { output.styled($0, .bold) }), "", footer, kept, freshness.text].joined(
                    separator: "\n"))
        }
        return 0
    }

    /// `812 B`, `4.2 KB`, `1.3 MB`, `2.0 GB` (binary multiples).
    static func bytes(_ count: Int64) -> String {
        let units = ["KB", "MB", "GB", "TB"]
        guard count >= 1024 else { return "\(count) B" }
        var value = Double(count) / 1024
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return String(format: "%.1f", value) + " " + units[unit]
    }
}
