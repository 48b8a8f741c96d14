import CSQLite

/// One SQLite connection: the only owner of a `sqlite3` handle and its prepared statements.
///
/// Not thread-safe: the store keeps each connection behind a lock. Statements are cached by SQL text, so hot paths
/// prepare once per connection.
// The store reaches a connection only through a lock (the writer's mutex or a reader checked out of the pool), so
// one thread uses it at a time; SQLite's own mutexes are off (SQLITE_OPEN_NOMUTEX) for that reason.
final class SQLiteConnection: @unchecked Sendable {
    private let handle: OpaquePointer
    private var statements: [String: SQLiteStatement] = [:]
    let path: String

    /// Opens (creating when `readOnly` is false) the database at `path` with a busy timeout.
    init(path: String, readOnly: Bool = false, busyTimeoutMilliseconds: Int32 = 5000) throws {
        self.path = path
        var pointer: OpaquePointer?
        let flags = (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) | SQLITE_OPEN_NOMUTEX
        let code = sqlite3_open_v2(path, &pointer, flags, nil)
        guard let pointer else {
            throw RollupStoreError(.connectionFailed, "sqlite3_open_v2(\(path)) returned \(code) without a handle")
        }
        guard code == SQLITE_OK else {
            let message = String(cString: sqlite3_errmsg(pointer))
            sqlite3_close_v2(pointer)
            throw RollupStoreError(.connectionFailed, "Cannot open SQLite database \(path): \(message)")
        }
        handle = pointer
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, busyTimeoutMilliseconds)
    }

    deinit {
        for statement in statements.values { statement.finalize() }
        sqlite3_close_v2(handle)
    }

    /// Runs one or more statements that bind nothing and return no rows.
    func execute(_ sql: String, file: String = #fileID, line: UInt = #line) throws {
        try check(sqlite3_exec(handle, sql, nil, nil, nil), file: file, line: line)
    }

    /// The cached prepared statement for `sql`, reset and with its bindings cleared.
    func statement(_ sql: String) throws -> SQLiteStatement {
        try statement(sql, rewritten: { $0 })
    }

    /// The prepared statement of `rewrite(sql)`, cached under `sql`, so a cached statement costs no rewrite.
    func statement(_ sql: String, rewritten rewrite: (String) -> String) throws -> SQLiteStatement {
        if let cached = statements[sql] {
            cached.reset()
            return cached
        }
        var pointer: OpaquePointer?
        try check(
            sqlite3_prepare_v3(handle, rewrite(sql), -1, UInt32(SQLITE_PREPARE_PERSISTENT), &pointer, nil))
        guard let pointer else { throw RollupStoreError(.queryFailed, "Empty SQL statement: \(sql)") }
        let statement = SQLiteStatement(handle: pointer, connection: self)
        statements[sql] = statement
        return statement
    }

    /// The number of rows the last INSERT, UPDATE or DELETE changed.
    var changes: Int { Int(sqlite3_changes(handle)) }

    /// Runs `body` in a transaction; `BEGIN IMMEDIATE` takes the write lock up front, so two writers never deadlock
    /// on a lock upgrade. Rolls back when `body` throws.
    func transaction<T>(immediate: Bool = false, _ body: () throws -> T) throws -> T {
        try execute(immediate ? "BEGIN IMMEDIATE" : "BEGIN")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            // The original error matters more than one from the rollback of an already failed transaction.
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// Throws the error a SQLite result code stands for, or returns for `SQLITE_OK`, `SQLITE_ROW` and `SQLITE_DONE`.
    func check(_ code: Int32, file: String = #fileID, line: UInt = #line) throws {
        guard code != SQLITE_OK && code != SQLITE_ROW && code != SQLITE_DONE else { return }
        throw Self.error(code: code, message: String(cString: sqlite3_errmsg(handle)), file: file, line: line)
    }

    /// The one place SQLite result codes become store errors: the file's own failures (I/O, full, read-only,
    /// damaged, busy past the timeout) are store-wide; only constraint and size errors blame the data.
    static func error(code: Int32, message: String, file: String = #fileID, line: UInt = #line) -> RollupStoreError {
        let primary = code & 0xff
        let described = "SQLite \(code): \(message)"
        let kind: RollupStoreError.Code
        var isRetriable = true
        switch primary {
        case SQLITE_BUSY, SQLITE_LOCKED: kind = .busy
        case SQLITE_IOERR, SQLITE_CANTOPEN, SQLITE_NOMEM: kind = .ioError
        case SQLITE_FULL: kind = .diskFull
        case SQLITE_READONLY: kind = .readOnly
        case SQLITE_PERM, SQLITE_AUTH: kind = .permissionDenied
        case SQLITE_CORRUPT, SQLITE_NOTADB:
            kind = .corrupt
            isRetriable = false
        case SQLITE_CONSTRAINT, SQLITE_TOOBIG, SQLITE_MISMATCH:
            kind = .refused
            isRetriable = false
        default:
            kind = .queryFailed
            isRetriable = false
        }
        return RollupStoreError(kind, described, isRetriable: isRetriable, file: file, line: line)
    }
}
