import FlowmeterModels
import Rollups
import Synchronization

/// The connections behind ``SQLRollupStore``: one writer connection behind a lock, a pool of reader connections.
///
/// SQLite allows one writer at a time anyway; keeping writes on one connection avoids `SQLITE_BUSY` between our own
/// writers. Readers get their own connections so they read a snapshot without waiting for the writer (WAL), and the
/// same for PostgreSQL's MVCC.
final class SQLRollupStoreCore: Sendable {
    private let writer: Mutex<RollupWriter>
    private let readers = Mutex<[any SQLDatabase]>([])
    private let openReader: @Sendable () throws -> any SQLDatabase
    let options: RollupStoreOptions

    init(
        writer database: any SQLDatabase, options: RollupStoreOptions,
        openReader: @escaping @Sendable () throws -> any SQLDatabase
    ) throws {
        try RollupSchema.migrate(database, now: options.clock().secondsSinceEpoch)
        self.options = options
        self.writer = Mutex(RollupWriter(connection: Self.connection(database, options: options)))
        self.openReader = openReader
    }

    func apply(_ partials: [PartialRollup]) throws -> RollupApplyResult {
        guard !partials.isEmpty else { return RollupApplyResult(applied: 0, duplicates: 0) }
        let now = options.clock().secondsSinceEpoch
        return try writer.withLock { writer in
            try writer.apply(partials, now: now, pruneBefore: now - options.appliedIDRetentionSeconds)
        }
    }

    func commit(_ steps: [PartitionStep]) throws {
        guard !steps.isEmpty else { return }
        let now = options.clock().secondsSinceEpoch
        try writer.withLock { writer in try writer.commit(steps, now: now) }
    }

    func insertNew(_ rows: NewRollupRows) throws {
        try writer.withLock { writer in try writer.insertNew(rows) }
    }

    /// Refreshes the planner's statistics (after a bulk load).
    func analyze() throws {
        try writer.withLock { writer in try writer.connection.database.executeScript("ANALYZE") }
    }

    /// Runs `body` on the writer connection, under the writer lock.
    func write<T: Sendable>(_ body: (TableConnection) throws -> T) throws -> T {
        try writer.withLock { writer in try body(writer.connection) }
    }

    /// Runs `body` on a pooled reader connection; a connection that failed is closed rather than reused.
    func read<T>(_ body: (TableConnection) throws -> T) throws -> T {
        let database = try readers.withLock { $0.popLast() } ?? openReader()
        do {
            let result = try body(Self.connection(database, options: options))
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

    private static func connection(_ database: any SQLDatabase, options: RollupStoreOptions) -> TableConnection {
        TableConnection(database: database, onUnreadableRows: options.onUnreadableRows)
    }

    func migrateAgain() throws {
        try writer.withLock { writer in
            try RollupSchema.migrate(writer.connection.database, now: options.clock().secondsSinceEpoch)
        }
    }

    func schemaVersion() throws -> Int64 {
        try read { try RollupSchema.currentVersion($0.database) }
    }
}
