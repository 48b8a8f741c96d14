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

/// A row of a window table: its key id and window start.
struct WindowRowKey: Hashable {
    var id: Int64
    var windowStart: Int64
}

extension WindowTable {
    /// Merges every rollup of `rollups` into its row, with the same result as calling ``merge(_:id:on:)`` for each in
    /// order, in a few statements per ``bulkRows`` rows instead of two or three per rollup.
    ///
    /// The rollups of one row (an hour's minutes) are merged into it in their order. The stored rows are read in
    /// chunks (`(id, window_start) IN (VALUES …)`, `FOR UPDATE` where the database has row locks) and decoded once;
    /// the rows that were there are written back with one multi-row upsert per chunk, and the new ones inserted with
    /// `ON CONFLICT DO NOTHING … RETURNING`: a row a concurrent writer inserted in between (PostgreSQL) is merged
    /// again by ``merge(_:id:on:)``, so no writer's counts are lost. A stored row that no longer decodes is replaced
    /// by the incoming rollups and reported, as ``merge(_:id:on:)`` does.
    func merge(_ rollups: [(id: Int64, rollup: Rollup)], on connection: TableConnection) throws {
        var order: [WindowRowKey] = []
        var incoming: [WindowRowKey: [Rollup]] = [:]
        for (id, rollup) in rollups {
            var rollup = rollup
            rollup.window = MinuteWindow(start: windowStart(of: rollup))
            let key = WindowRowKey(id: id, windowStart: rollup.window.start)
            if incoming[key]?.append(rollup) == nil {
                incoming[key] = [rollup]
                order.append(key)
            }
        }
        for chunk in BulkChunks.ranges(count: order.count) {
            let keys = order[chunk]
            let stored = try read(keys, incoming: incoming, on: connection)
            var updated: [WindowRowKey] = []
            var inserted: [WindowRowKey] = []
            var rows: [WindowRowKey: Rollup] = [:]
            for key in keys {
                let merging = incoming[key]!
                var row: Rollup
                var rest = merging[...]
                if case .some(.some(let decoded)) = stored[key] {
                    row = decoded
                } else {
                    // No row, or one that does not decode: the incoming rollups replace it.
                    row = merging[0]
                    rest = merging.dropFirst()
                }
                for rollup in rest { row.merge(rollup) }
                rows[key] = row
                if stored[key] == nil { inserted.append(key) } else { updated.append(key) }
            }
            try write(updated, rows: rows, upsert: true, on: connection)
            let raced = try write(inserted, rows: rows, upsert: false, on: connection)
            for key in raced {
                for rollup in incoming[key]! { try merge(rollup, id: key.id, on: connection) }
            }
        }
    }

    /// The stored rows of `keys`: a rollup for each that decodes, nil for one that does not (reported), no entry for
    /// a row that is not there.
    private func read(
        _ keys: ArraySlice<WindowRowKey>, incoming: [WindowRowKey: [Rollup]], on connection: TableConnection
    ) throws -> [WindowRowKey: Rollup?] {
        let database = connection.database
        var values: [SQLValue] = []
        values.reserveCapacity(2 * keys.count)
        for key in keys { values += [.integer(key.id), .integer(key.windowStart)] }
        var stored: [WindowRowKey: Rollup?] = [:]
        try database.query(
            """
            SELECT \(Self.idColumn), window_start, \(Self.valueColumns.list()) FROM \(name)
            WHERE (\(Self.idColumn), window_start) IN (VALUES \(Self.keyTuples(keys.count)))\(database.forUpdate)
            """, values
        ) { row in
            let key = WindowRowKey(id: try row.int64(0), windowStart: try row.int64(1))
            guard let merging = incoming[key] else { return }
            stored[key] = .some(
                try connection.decodeStored(name) {
                    try Self.decode(row, offset: 2, key: merging[0].rollupKey, windowStart: key.windowStart)
                })
        }
        return stored
    }

    /// Writes the rows of `keys`. With `upsert`, every row is written whether or not it is there (the caller read
    /// and merged it); without, only rows that are not there are inserted, and the keys of the rows that were there
    /// after all (a concurrent writer inserted them) are returned.
    @discardableResult
    private func write(
        _ keys: [WindowRowKey], rows: [WindowRowKey: Rollup], upsert: Bool, on connection: TableConnection
    ) throws -> [WindowRowKey] {
        guard !keys.isEmpty else { return [] }
        var values: [SQLValue] = []
        values.reserveCapacity(keys.count * Self.columns.count)
        for key in keys { values += Self.row(of: rows[key]!, id: key.id) }
        let statement = """
            INSERT INTO \(name) (\(Self.columns.list())) VALUES \(Self.rowTuples(keys.count))
            ON CONFLICT (\(Self.idColumn), window_start) DO
            """
        if upsert {
            try connection.database.update(statement + " UPDATE SET \(Self.valueColumns.fromExcluded)", values)
            return []
        }
        var written = Set<WindowRowKey>()
        try connection.database.query(
            statement + " NOTHING RETURNING \(Self.idColumn), window_start", values
        ) { row in
            written.insert(WindowRowKey(id: try row.int64(0), windowStart: try row.int64(1)))
        }
        return keys.filter { !written.contains($0) }
    }

    /// `(CAST($1 AS BIGINT), CAST($2 AS BIGINT)), …` for `count` keys.
    private static func keyTuples(_ count: Int) -> String {
        (0..<count).map { "(CAST($\(2 * $0 + 1) AS BIGINT), CAST($\(2 * $0 + 2) AS BIGINT))" }.joined(separator: ", ")
    }

    /// `($1, …, $n), ($n+1, …), …`: `count` rows of ``columns``.
    private static func rowTuples(_ count: Int) -> String {
        (0..<count).map { "(\(columns.placeholders(from: 1 + $0 * columns.count)))" }.joined(separator: ", ")
    }
}
