import FlowmeterModels
import Rollups
import Synchronization

/// The machinery both SQL stores share: one writer connection behind a lock, a pool of reader connections.
///
/// SQLite allows one writer at a time anyway; keeping writes on one connection avoids `SQLITE_BUSY` between our own
/// writers. Readers get their own connections so they read a snapshot without waiting for the writer (WAL), and the
/// same for PostgreSQL's MVCC.
final class SQLRollupStoreCore: Sendable {
    private struct Writer {
        let database: any SQLDatabase
        var cache = RollupTables.IDCache()
    }

    private let writer: Mutex<Writer>
    private let readers = Mutex<[any SQLDatabase]>([])
    private let openReader: @Sendable () throws -> any SQLDatabase
    let options: RollupStoreOptions

    init(
        writer database: any SQLDatabase, options: RollupStoreOptions,
        openReader: @escaping @Sendable () throws -> any SQLDatabase
    ) throws {
        try RollupSchema.migrate(database, now: options.clock().secondsSinceEpoch)
        self.writer = Mutex(Writer(database: database))
        self.options = options
        self.openReader = openReader
    }

    func apply(_ partials: [PartialRollup]) throws -> RollupApplyResult {
        guard !partials.isEmpty else { return RollupApplyResult(applied: 0, duplicates: 0) }
        let now = options.clock().secondsSinceEpoch
        return try writer.withLock { writer in
            try tables(writer.database).apply(
                partials, now: now, pruneBefore: now - options.appliedIDRetentionSeconds, cache: &writer.cache)
        }
    }

    func bulkLoad(series: [SeriesRollup], versions: [VersionRollup]) throws {
        try writer.withLock { writer in
            try tables(writer.database).bulkLoad(
                series: series, versions: versions, cache: &writer.cache)
        }
    }

    /// Refreshes the planner's statistics (after a bulk load).
    func analyze() throws {
        try writer.withLock { writer in try writer.database.executeScript("ANALYZE") }
    }

    func write<T: Sendable>(_ body: (RollupTables) throws -> T) throws -> T {
        try writer.withLock { writer in try body(tables(writer.database)) }
    }

    /// Runs `body` on a pooled reader connection; a connection that failed is closed rather than reused.
    func read<T>(_ body: (RollupTables) throws -> T) throws -> T {
        let database = try readers.withLock { $0.popLast() } ?? openReader()
        do {
            let result = try body(tables(database))
            readers.withLock { pool in
                if pool.count < options.readerConnections { pool.append(database) }
            }
            return result
        } catch let error as RollupStoreError where error.code != .connectionFailed {
            readers.withLock { pool in
                if pool.count < options.readerConnections { pool.append(database) }
            }
            throw error
        }
    }

    private func tables(_ database: any SQLDatabase) -> RollupTables {
        RollupTables(database: database, onUnreadableRows: options.onUnreadableRows)
    }

    func migrateAgain() throws {
        try writer.withLock { writer in
            try RollupSchema.migrate(writer.database, now: options.clock().secondsSinceEpoch)
        }
    }

    func schemaVersion() throws -> Int64 {
        try read { try RollupSchema.currentVersion($0.database) }
    }
}
