/// Rows one read skipped because they do not decode (written by an older version, a bug or a hand edit).
///
/// A read never fails whole for one bad row: it answers with the rest and reports what it skipped once, through
/// ``RollupStoreOptions/onUnreadableRows``. A write that meets an unreadable stored row replaces it with the incoming
/// rollup and reports it the same way.
public struct UnreadableRows: Sendable, Hashable, CustomStringConvertible {
    /// The table the rows are in, such as `series_minutes`.
    public var table: String
    /// How many rows were skipped.
    public var count: Int
    /// Why the first of them could not be read; values from the row are quoted with Swift escapes.
    public var firstProblem: String

    /// Creates a report.
    public init(table: String, count: Int, firstProblem: String) {
        self.table = table
        self.count = count
        self.firstProblem = firstProblem
    }

    /// `skipped 2 unreadable rows in series_minutes (first: …)`, for a warning.
    public var description: String {
        "skipped \(count) unreadable row\(count == 1 ? "" : "s") in \(table) (first: \(firstProblem))"
    }
}

/// The tally a read keeps while it walks its rows.
struct SkippedRows {
    let table: String
    private(set) var count = 0
    private(set) var firstProblem: String?

    init(_ table: String) { self.table = table }

    mutating func record(_ error: RollupStoreError) {
        count += 1
        if firstProblem == nil { firstProblem = error.message }
    }

    var report: UnreadableRows? {
        firstProblem.map { UnreadableRows(table: table, count: count, firstProblem: $0) }
    }
}
