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
