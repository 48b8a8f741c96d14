import Rollups

/// The writes that span tables, over the one writer connection: applying partial rollups, and inserting new rows in
/// bulk for a benchmark.
///
/// Each minute rollup is merged into its minute row and into its hour row in the same transaction (see
/// ``WindowTable``), so 30-day baselines read hours (720 rows per series) instead of minutes (43,200).
struct RollupWriter {
    let connection: TableConnection

    /// Series and version ids are immutable once committed, so the writer keeps them across transactions.
    struct IDCache {
        var series: [RollupSeries: Int64] = [:]
        var versions: [VersionKey: Int64] = [:]

        /// Keeps the ids of a committed transaction; only those may outlive it.
        mutating func keep(_ committed: IDCache) {
            series.merge(committed.series) { old, _ in old }
            versions.merge(committed.versions) { old, _ in old }
        }
    }

    private var cache = IDCache()

    init(connection: TableConnection) {
        self.connection = connection
    }

    /// Applies `partials` in one transaction, skipping ids applied before, and prunes applied ids older than
    /// `pruneBefore` (epoch seconds).
    mutating func apply(_ partials: [PartialRollup], now: Int64, pruneBefore: Int64) throws -> RollupApplyResult {
        var pending = IDCache()
        let result = try connection.database.writeTransaction {
            try connection.database.lockForRollupWrites()
            var result = RollupApplyResult(applied: 0, duplicates: 0)
            for partial in partials {
                guard try AppliedMessagesTable.claim(partial.id, now: now, on: connection) else {
                    result.duplicates += 1
                    continue
                }
                result.applied += 1
                switch partial.rollup {
                case .series(let rollup):
                    let id = try seriesID(rollup.series, pending: &pending)
                    for table in [SeriesWindowTable.minutes, .hours] {
                        try table.merge(rollup, id: id, on: connection)
                    }
                    try TypeFirstSeenTable.record(rollup, on: connection)
                case .version(let rollup):
                    let id = try versionID(rollup.key, pending: &pending)
                    for table in [VersionWindowTable.minutes, .hours] {
                        try table.merge(rollup, id: id, on: connection)
                    }
                }
            }
            try AppliedMessagesTable.prune(before: pruneBefore, on: connection)
            return result
        }
        cache.keep(pending)
        return result
    }

    /// Applies sink steps in one transaction, which takes its turn among the writers of rollup rows first
    /// (``SQLDatabase/lockForRollupWrites()``: two sinks merge the same rows, and would deadlock on their row locks
    /// in PostgreSQL): every partition's offset, in partition order (fenced: ``PartitionFenced`` when one moved), then
    /// the rollups of every step merged, then the counted batches.
    mutating func commit(_ steps: [PartitionStep], now: Int64) throws {
        var pending = IDCache()
        let ordered = steps.sorted { ($0.topic, $0.partition) < ($1.topic, $1.partition) }
        try connection.database.writeTransaction {
            try connection.database.lockForRollupWrites()
            for step in ordered { try SinkPartitionsTable.advance(step, now: now, on: connection) }
            // In bulk (WindowTable.merge(_:ids:on:)): the same rows as merging each rollup in turn, in a few
            // statements per hundred rows.
            let series = steps.count == 1 ? steps[0].series : steps.flatMap(\.series)
            let seriesIDs = try series.map { try seriesID($0.series, pending: &pending) }
            for table in [SeriesWindowTable.minutes, .hours] {
                try table.merge(series, ids: seriesIDs, on: connection)
            }
            try TypeFirstSeenTable.record(series, on: connection)
            let versions = steps.count == 1 ? steps[0].versions : steps.flatMap(\.versions)
            let versionIDs = try versions.map { try versionID($0.key, pending: &pending) }
            for table in [VersionWindowTable.minutes, .hours] {
                try table.merge(versions, ids: versionIDs, on: connection)
            }
            for step in ordered { try SinkPartitionsTable.remember(step, on: connection) }
        }
        cache.keep(pending)
    }

    /// Writes `rows` into windows that hold no rows yet, in bulk (prepared statement or COPY), in one transaction:
    /// nothing is merged and no applied ids are recorded. For filling a benchmark database fast.
    mutating func insertNew(_ rows: NewRollupRows) throws {
        var pending = IDCache()
        try connection.database.writeTransaction {
            for (table, rollups) in [(SeriesWindowTable.minutes, rows.seriesMinutes), (.hours, rows.seriesHours)] {
                try insert(rollups, into: table) { try seriesID($0.series, pending: &pending) }
            }
            for rollup in rows.firstSeen { try TypeFirstSeenTable.record(rollup, on: connection) }
            for (table, rollups) in [(VersionWindowTable.minutes, rows.versionMinutes), (.hours, rows.versionHours)] {
                try insert(rollups, into: table) { try versionID($0.key, pending: &pending) }
            }
        }
        cache.keep(pending)
    }

    private func insert<Table: WindowTable>(
        _ rollups: [Table.Rollup], into table: Table, id: (Table.Rollup) throws -> Int64
    ) throws {
        let rows = try rollups.map { Table.row(of: $0, id: try id($0)) }
        try connection.database.bulkInsert(table: table.name, columns: Table.columns.names, rows: rows)
    }

    private func seriesID(_ series: RollupSeries, pending: inout IDCache) throws -> Int64 {
        try SeriesTable.id(for: series, cached: cache.series, pending: &pending.series, on: connection)
    }

    private func versionID(_ key: VersionKey, pending: inout IDCache) throws -> Int64 {
        try VersionTable.id(for: key, cached: cache.versions, pending: &pending.versions, on: connection)
    }
}
