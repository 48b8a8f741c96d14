import Foundation

extension SQLiteConnection: SQLDatabase {
    var forUpdate: String { "" }
    var blobType: String { "BLOB" }
    var autoIDColumn: String { "INTEGER PRIMARY KEY" }

    func query(_ sql: String, _ values: [SQLValue], row: (any SQLRow) throws -> Void) throws {
        let statement = try statement(Self.numbered(sql))
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

    /// The SQL with PostgreSQL's `$N` parameters rewritten to SQLite's equivalent `?N`.
    private static func numbered(_ sql: String) -> String {
        sql.contains("$") ? sql.replacingOccurrences(of: "$", with: "?") : sql
    }
}

extension SQLiteStatement: SQLRow {
    func isNull(_ column: Int32) -> Bool { isNullColumn(column) }
    func int64(_ column: Int32) throws -> Int64 { int64Column(column) }
    func text(_ column: Int32) throws -> String { textColumn(column) }
    func blob(_ column: Int32) throws -> [UInt8] { blobColumn(column) }
}
