import FlowmeterModels
import Rollups

/// Deletes what a ``RetentionPolicy`` no longer keeps, a bounded batch per transaction, and reclaims the space.
///
/// The horizons move first: from then on reads of the older minutes are answered from the hour rows, which hold
/// every one of them, so no read ever sees an hour half deleted.
enum RetentionPruner {
    /// One table retention deletes from: its rows with `column` before `cutoff`, found by `keyColumns`.
    private struct Target {
        var table: String
        var keyColumns: SQLColumns
        var column: String
        var cutoff: Int64
        var kind: Kind
    }

    private enum Kind {
        case minutes, hours, appliedIDs
    }

    static func prune(
        _ policy: RetentionPolicy, now: Int64, appliedIDsBefore: Int64, core: SQLRollupStoreCore,
        shouldContinue: () -> Bool
    ) throws -> PruneReport {
        if let problem = policy.problem { throw RollupStoreError(.queryFailed, "Invalid retention: \(problem)") }
        let minutesCutoff = WindowRange.hourStart(now - policy.keepMinutes)
        let hoursCutoff = WindowRange.hourStart(now - policy.keepHours)
        var report = PruneReport(
            minutesBefore: Timestamp(secondsSinceEpoch: minutesCutoff),
            hoursBefore: Timestamp(secondsSinceEpoch: hoursCutoff))
        let minuteTables = [SeriesWindowTable.minutes.name, VersionWindowTable.minutes.name]
        let hourTables = [SeriesWindowTable.hours.name, VersionWindowTable.hours.name]
        try core.write { connection in
            try connection.database.writeTransaction {
                if try hasRows(in: minuteTables, before: minutesCutoff, on: connection) {
                    try RetentionHorizonsTable.advance(.minutes, to: minutesCutoff, on: connection)
                }
                if try hasRows(in: hourTables, before: hoursCutoff, on: connection) {
                    try RetentionHorizonsTable.advance(.hours, to: hoursCutoff, on: connection)
                }
            }
        }
        let targets =
            [
                Target(
                    table: SeriesWindowTable.minutes.name, keyColumns: [SeriesWindowTable.idColumn, "window_start"],
                    column: "window_start", cutoff: minutesCutoff, kind: .minutes),
                Target(
                    table: VersionWindowTable.minutes.name, keyColumns: [VersionWindowTable.idColumn, "window_start"],
                    column: "window_start", cutoff: minutesCutoff, kind: .minutes),
                Target(
                    table: SeriesWindowTable.hours.name, keyColumns: [SeriesWindowTable.idColumn, "window_start"],
                    column: "window_start", cutoff: hoursCutoff, kind: .hours),
                Target(
                    table: VersionWindowTable.hours.name, keyColumns: [VersionWindowTable.idColumn, "window_start"],
                    column: "window_start", cutoff: hoursCutoff, kind: .hours),
                Target(
                    table: AppliedMessagesTable.name, keyColumns: ["id"], column: "applied_at",
                    cutoff: appliedIDsBefore, kind: .appliedIDs),
            ]
        for target in targets {
            let keys = target.keyColumns.count == 1 ? target.keyColumns.list() : "(\(target.keyColumns.list()))"
            let sql = """
                DELETE FROM \(target.table) WHERE \(keys) IN (
                    SELECT \(target.keyColumns.list()) FROM \(target.table) WHERE \(target.column) < $1 LIMIT $2)
                """
            while true {
                guard shouldContinue() else {
                    report.isComplete = false
                    return report
                }
                let deleted = try core.write { connection in
                    try connection.database.writeTransaction {
                        // A batch takes its turn among the sinks' commits: a sink merging into the same old rows
                        // (a very late batch, a rebuild) locks them in its own order, and the two would deadlock.
                        try connection.database.lockForRollupWrites()
                        return try connection.database.update(
                            sql, [.integer(target.cutoff), .integer(Int64(policy.batchRows))])
                    }
                }
                report.batches += 1
                switch target.kind {
                case .minutes: report.minuteRows += deleted
                case .hours: report.hourRows += deleted
                case .appliedIDs: report.appliedIDs += deleted
                }
                if deleted < policy.batchRows { break }
            }
        }
        report.reclaimedPages = try reclaim(policy, core: core, shouldContinue: shouldContinue)
        return report
    }

    /// Returns free pages to the file system a step at a time, each under the writer lock; nil where the database
    /// does not do that.
    private static func reclaim(
        _ policy: RetentionPolicy, core: SQLRollupStoreCore, shouldContinue: () -> Bool
    ) throws -> Int? {
        let step = max(1, policy.reclaimPages)
        guard var total = try core.write({ try $0.database.reclaimFreePages(maxPages: step) }) else { return nil }
        var last = total
        // A bounded loop: each step frees up to `step` pages, and the free list only shrinks.
        while last == step && shouldContinue() {
            last = try core.write { try $0.database.reclaimFreePages(maxPages: step) } ?? 0
            total += last
        }
        return total
    }

    private static func hasRows(in tables: [String], before cutoff: Int64, on connection: TableConnection) throws
        -> Bool
    {
        var found = false
        for table in tables where !found {
            try connection.database.query(
                "SELECT 1 FROM \(table) WHERE window_start < $1 LIMIT 1", [.integer(cutoff)]
            ) { _ in found = true }
        }
        return found
    }
}
