/// What the rollup tables need from a database connection; SQLite and PostgreSQL each adapt their wrapper to it.
///
/// SQL is written once with `$1`-style parameters and portable syntax (`ON CONFLICT`, `RETURNING`,
/// `CAST(… AS BIGINT)`); `forUpdate` is `" FOR UPDATE"` where row locks exist and empty where the whole database
/// is locked by the transaction (SQLite).
protocol SQLDatabase: AnyObject, Sendable {
    /// The dialect's row-lock suffix for a read-modify-write SELECT.
    var forUpdate: String { get }
    /// The column type for binary data.
    var blobType: String { get }
    /// The column definition of an integer primary key the database assigns.
    var autoIDColumn: String { get }
    /// Runs `sql` with `values`, calling `row` for every result row.
    func query(_ sql: String, _ values: [SQLValue], row: (any SQLRow) throws -> Void) throws
    /// Runs `sql` with `values`; returns how many rows it changed.
    @discardableResult func update(_ sql: String, _ values: [SQLValue]) throws -> Int
    /// Runs statements that bind nothing (DDL).
    func executeScript(_ sql: String) throws
    /// Runs `body` in a write transaction; rolls back when it throws.
    @discardableResult func writeTransaction<T>(_ body: () throws -> T) throws -> T
    /// Inserts many rows quickly (prepared statement or COPY); the caller holds a transaction where one is needed.
    func bulkInsert(table: String, columns: [String], rows: [[SQLValue]]) throws
    /// Takes the lock that serializes migrations between processes, inside the current transaction.
    func lockForMigration() throws
    /// Takes the lock that serializes transactions writing rollup rows between processes (two sinks of one group, a
    /// retention prune's delete batch), inside the current transaction, until it ends. They write the same rows (the
    /// dedupe key spreads every app, version and minute over all partitions), each in its own order, so with row locks
    /// alone two of them wait for each other and PostgreSQL aborts one as a deadlock; SQLite's `BEGIN IMMEDIATE`
    /// serializes them already.
    func lockForRollupWrites() throws
    /// Returns up to `maxPages` free pages to the file system (SQLite's `incremental_vacuum`); the pages returned,
    /// or nil where the database does this itself (PostgreSQL's autovacuum) or the file was made without
    /// incremental vacuum. Outside a transaction.
    func reclaimFreePages(maxPages: Int) throws -> Int?
    /// Rewrites the database so that free pages can be reclaimed incrementally from then on (SQLite: `VACUUM` with
    /// `auto_vacuum=INCREMENTAL`); false where there is nothing to do. Needs the database to itself for as long as
    /// the rewrite takes.
    func enableIncrementalReclaim() throws -> Bool
    /// Whether free pages go back to the file system incrementally (SQLite `auto_vacuum=INCREMENTAL`); nil where
    /// the database manages space itself.
    func reclaimsIncrementally() throws -> Bool?
    /// The bytes the database takes: `total`, and `free` (pages it holds but does not use) where it knows.
    func storageBytes() throws -> (total: Int64, free: Int64?)
    /// The bytes `table` and its indexes take, where the database can say.
    func tableBytes(_ table: String) throws -> Int64?
}

extension SQLDatabase {
    func query(_ sql: String, _ values: [SQLValue] = []) throws {
        try query(sql, values) { _ in }
    }
}
