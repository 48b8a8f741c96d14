import Synchronization

/// How a bulk write or read splits its rows into multi-row statements.
///
/// Runs of ``maxRows``, then the rest in powers of two (64, 32, …, 1), so a table has at most eight statement shapes
/// however many rows a step brings: SQLite caches each prepared statement by its text, and PostgreSQL plans fewer
/// distinct statements.
enum BulkChunks {
    /// The most rows one statement carries: about ten parameters a row written, well inside SQLite's (32,766) and
    /// PostgreSQL's (65,535) parameter limits.
    static let maxRows = 128

    /// `0..<count` cut into consecutive ranges of ``maxRows``, then of decreasing powers of two.
    static func ranges(count: Int) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        var start = 0
        var size = maxRows
        while start < count {
            while size > count - start { size /= 2 }
            ranges.append(start..<start + size)
            start += size
        }
        return ranges
    }
}

/// The texts of the bulk statements, made once per process: building a 128-row statement's text took longer than
/// SQLite took to run it.
enum BulkSQL {
    /// What a statement does.
    enum Kind: Hashable {
        /// A read of the rows, locking them (`FOR UPDATE`) or not (SQLite, which locks the whole database).
        case read(locking: Bool)
        case upsert, insert
        /// An insert of rows the writer knows are new, under its lock on the whole database (no `RETURNING`).
        case insertLocked
    }

    /// One statement: its kind, table and row count.
    struct Key: Hashable {
        var kind: Kind
        var table: String
        var count: Int
    }

    private static let texts = Mutex<[Key: String]>([:])

    /// The text of `key`'s statement, `make()` the first time.
    static func text(_ key: Key, make: () -> String) -> String {
        if let text = texts.withLock({ $0[key] }) { return text }
        let text = make()
        texts.withLock { $0[key] = text }
        return text
    }
}
