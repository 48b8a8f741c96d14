import Foundation

extension SQLiteConnection: SQLDatabase {
    var forUpdate: String { "" }
    var blobType: String { "BLOB" }
    var autoIDColumn: String { "INTEGER PRIMARY KEY" }

    func query(_ sql: String, _ values: [SQLValue], row: (any SQLRow) throws -> Void) throws {
        let statement = try statement(sql, rewritten: Self.numbered)
        defer { statement.reset() }
        try statement.bind(values)
        while try statement.step() { try row(statement) }
    }

    func update(_ sql: String, _ values: [SQLValue]) throws -> Int {
        try query(sql, values)
        return changes
    }

    func writeTransaction<T>(_ body: () throws -> T) throws -> T {
        try transaction(immediate: true, body)
    }

    func bulkInsert(table: String, columns: [String], rows: [[SQLValue]]) throws {
        let placeholders = (1...columns.count).map { "?\($0)" }.joined(separator: ", ")
        let statement = try statement(
            "INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES (\(placeholders))")
        for row in rows {
            statement.reset()
            try statement.bind(row)
            _ = try statement.step()
        }
        statement.reset()
    }

    func executeScript(_ sql: String) throws {
        try execute(sql)
    }

    func lockForMigration() throws {
        // BEGIN IMMEDIATE already holds the database's write lock.
    }

    func lockForRollupWrites() throws {
        // BEGIN IMMEDIATE already holds the database's write lock.
    }

    func reclaimFreePages(maxPages: Int) throws -> Int? {
        // 2 is INCREMENTAL; a file made before it was set reclaims only after `enableIncrementalReclaim()`.
        guard try pragma("auto_vacuum") == 2 else { return nil }
        let before = try pragma("freelist_count")
        try execute("PRAGMA incremental_vacuum(\(max(1, maxPages)))")
        return Int(before - (try pragma("freelist_count")))
    }

    func enableIncrementalReclaim() throws -> Bool {
        guard try pragma("auto_vacuum") != 2 else { return false }
        try execute("PRAGMA auto_vacuum=INCREMENTAL")
        try execute("VACUUM")
        return true
    }

    func reclaimsIncrementally() throws -> Bool? { try pragma("auto_vacuum") == 2 }

    func storageBytes() throws -> (total: Int64, free: Int64?) {
        let pageSize = try pragma("page_size")
        return (try pragma("page_count") * pageSize, try pragma("freelist_count") * pageSize)
    }

    func tableBytes(_ table: String) throws -> Int64? {
        var bytes: Int64?
        do {
            try query(
                """
                SELECT CAST(COALESCE(SUM(pgsize), 0) AS BIGINT) FROM dbstat
                WHERE name IN (SELECT name FROM sqlite_master WHERE tbl_name = $1)
                """, [.text(table)]
            ) { row in bytes = try row.int64(0) }
        } catch let error as RollupStoreError where error.code == .queryFailed {
            // A SQLite built without the dbstat table cannot say.
            return nil
        }
        return bytes
    }

    private func pragma(_ name: String) throws -> Int64 {
        var value: Int64 = 0
        try query("PRAGMA \(name)", []) { row in value = try row.int64(0) }
        return value
    }

    /// The SQL with PostgreSQL's `$N` parameters rewritten to SQLite's equivalent `?N`: every `$` byte becomes `?`.
    /// Run only when a statement is prepared (statements are cached under the SQL as written): per query, Foundation's
    /// `replacingOccurrences` here was half the sink's step on SQLite (perf, `flowmeter-bench sink`).
    private static func numbered(_ sql: String) -> String {
        guard sql.utf8.contains(UInt8(ascii: "$")) else { return sql }
        return String(decoding: sql.utf8.map { $0 == UInt8(ascii: "$") ? UInt8(ascii: "?") : $0 }, as: UTF8.self)
    }
}

extension SQLiteStatement: SQLRow {
    func isNull(_ column: Int32) -> Bool { isNullColumn(column) }
    func int64(_ column: Int32) throws -> Int64 { int64Column(column) }
    func text(_ column: Int32) throws -> String { textColumn(column) }
    func blob(_ column: Int32) throws -> [UInt8] { blobColumn(column) }
}
