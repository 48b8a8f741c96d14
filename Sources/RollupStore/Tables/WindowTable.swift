import Rollups

/// A minute or hour table of one rollup kind: one row per key id and window start, merged with the `Rollups` laws.
///
/// Merges are read-modify-write in Swift (HyperLogLog, bounded releases and samples do not merge in SQL): the row is
/// read `FOR UPDATE` where the database has row locks, and a concurrent first insert is resolved by
/// `ON CONFLICT DO NOTHING` followed by a re-read.
protocol WindowTable {
    associatedtype Rollup: WindowedRollup
    /// `series_minutes`, `series_hours`, …
    var name: String { get }
    /// Whether a row holds the hour that starts at `window_start` rather than the minute.
    var isHours: Bool { get }
    /// The column that points to the key's id: `series_id` or `version_id`.
    static var idColumn: String { get }
    /// The rollup's columns after the id and `window_start`, in the order of ``values(of:)`` and ``decode``.
    static var valueColumns: SQLColumns { get }
    /// `rollup`'s counts, sketch and lists as the values of ``valueColumns``.
    static func values(of rollup: Rollup) -> [SQLValue]
    /// The rollup held by ``valueColumns`` read from column `offset` on; throws `invalidData` when it does not decode.
    static func decode(_ row: any SQLRow, offset: Int32, key: Rollup.Key, windowStart: Int64) throws -> Rollup
}

extension WindowTable {
    /// Every column of a row: the id, `window_start`, then ``valueColumns``.
    static var columns: SQLColumns { [idColumn, "window_start"] + valueColumns }

    /// The row of `rollup` under key id `id`, in ``columns`` order.
    static func row(of rollup: Rollup, id: Int64) -> [SQLValue] {
        [.integer(id), .integer(rollup.window.start)] + values(of: rollup)
    }

    /// The window start of the row `rollup` merges into: its minute, or the hour that holds it.
    func windowStart(of rollup: Rollup) -> Int64 {
        isHours ? WindowRange.hourStart(rollup.window.start) : rollup.window.start
    }

    /// Merges `rollup` into its row under key id `id`, inserting the row when there is none.
    ///
    /// A stored row that no longer decodes is replaced by the incoming rollup (and reported through
    /// `connection`), so one bad row never stalls the sink's partition. Throws a retriable `conflict` when a
    /// concurrent writer keeps the row from being read or inserted.
    func merge(_ rollup: Rollup, id: Int64, on connection: TableConnection) throws {
        let database = connection.database
        let windowStart = windowStart(of: rollup)
        var incoming = rollup
        incoming.window = MinuteWindow(start: windowStart)
        // Two rounds at most: a concurrent writer can win the first insert, after which the row exists.
        for _ in 0..<2 {
            var stored: Rollup?
            var isUnreadable = false
            try database.query(
                """
                SELECT \(Self.valueColumns.list()) FROM \(name)
                WHERE \(Self.idColumn) = $1 AND window_start = $2\(database.forUpdate)
                """, [.integer(id), .integer(windowStart)]
            ) { row in
                stored = try connection.decodeStored(name) {
                    try Self.decode(row, offset: 0, key: rollup.rollupKey, windowStart: windowStart)
                }
                isUnreadable = stored == nil
            }
            if isUnreadable { stored = incoming }
            if var stored {
                if !isUnreadable { stored.merge(incoming) }
                try database.update(
                    """
                    UPDATE \(name) SET \(Self.valueColumns.assignments(from: 3))
                    WHERE \(Self.idColumn) = $1 AND window_start = $2
                    """, Self.row(of: stored, id: id))
                return
            }
            let inserted = try database.update(
                """
                INSERT INTO \(name) (\(Self.columns.list())) VALUES (\(Self.columns.placeholders()))
                ON CONFLICT (\(Self.idColumn), window_start) DO NOTHING
                """, Self.row(of: incoming, id: id))
            if inserted == 1 { return }
        }
        throw RollupStoreError(.conflict, "Could not merge into \(name) row \(id)/\(windowStart)", isRetriable: true)
    }
}
