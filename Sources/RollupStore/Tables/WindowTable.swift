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

    /// Appends the row of `rollup` under key id `id` (``row(of:id:)``) to `values`, without a row array of its own.
    static func appendRow(of rollup: Rollup, id: Int64, to values: inout [SQLValue]) {
        values.append(.integer(id))
        values.append(.integer(rollup.window.start))
        values.append(contentsOf: Self.values(of: rollup))
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
    /// Merges every rollup of `rollups` into its row (`rollups[i]` under key id `ids[i]`), with the same result as calling ``merge(_:id:on:)`` for each in
    /// order, in a few statements per ``bulkRows`` rows instead of two or three per rollup.
    ///
    /// The rollups of one row (an hour's minutes) are merged into it in their order. The stored rows are read in
    /// chunks (a join from `VALUES` of the keys, `FOR UPDATE` where the database has row locks) and decoded once;
    /// the rows that were there are written back with one multi-row upsert per chunk, and the new ones inserted with
    /// `ON CONFLICT DO NOTHING … RETURNING`: a row a concurrent writer inserted in between (PostgreSQL) is merged
    /// again by ``merge(_:id:on:)``, so no writer's counts are lost. A stored row that no longer decodes is replaced
    /// by the incoming rollups and reported, as ``merge(_:id:on:)`` does.
    func merge(_ rollups: [Rollup], ids: [Int64], on connection: TableConnection) throws {
        // The rows in the order their first rollup comes, and each row's rollups as a chain of indices into
        // `rollups` (no array, and no copy of a rollup, per row).
        var rows: [WindowRowKey] = []
        var rowOfKey: [WindowRowKey: Int] = [:]
        var first: [Int] = []
        var last: [Int] = []
        var next = [Int](repeating: -1, count: rollups.count)
        rows.reserveCapacity(rollups.count)
        for (index, rollup) in rollups.enumerated() {
            let key = WindowRowKey(id: ids[index], windowStart: windowStart(of: rollup))
            if let row = rowOfKey[key] {
                next[last[row]] = index
                last[row] = index
            } else {
                rowOfKey[key] = rows.count
                rows.append(key)
                first.append(index)
                last.append(index)
            }
        }
        for chunk in BulkChunks.ranges(count: rows.count) {
            let stored = try read(rows[chunk], firsts: first[chunk], rollups: rollups, on: connection)
            var updated: [SQLValue] = []
            var inserted: [SQLValue] = []
            inserted.reserveCapacity(chunk.count * Self.columns.count)
            var insertedKeys: [WindowRowKey] = []
            insertedKeys.reserveCapacity(chunk.count)
            for row in chunk {
                let key = rows[row]
                var index = first[row]
                let storedRow = stored[key]
                if storedRow == nil, next[index] < 0, rollups[index].window.start == key.windowStart {
                    // A new row of one rollup (a minute): written as it came, no copy.
                    Self.appendRow(of: rollups[index], id: key.id, to: &inserted)
                    insertedKeys.append(key)
                    continue
                }
                var merged: Rollup
                if case .some(.some(let decoded)) = storedRow {
                    merged = decoded
                } else {
                    // No row, or one that does not decode: the incoming rollups replace it.
                    merged = rollups[index]
                    merged.window = MinuteWindow(start: key.windowStart)
                    index = next[index]
                }
                while index >= 0 {
                    if rollups[index].window.start == key.windowStart {
                        merged.merge(rollups[index])
                    } else {
                        var rollup = rollups[index]
                        rollup.window = MinuteWindow(start: key.windowStart)
                        merged.merge(rollup)
                    }
                    index = next[index]
                }
                if storedRow == nil {
                    Self.appendRow(of: merged, id: key.id, to: &inserted)
                    insertedKeys.append(key)
                } else {
                    Self.appendRow(of: merged, id: key.id, to: &updated)
                }
            }
            try upsert(updated, on: connection)
            for key in try insert(inserted, keys: insertedKeys, on: connection) {
                // A concurrent writer inserted the row after the read: merge into it one rollup at a time.
                var index = first[rowOfKey[key]!]
                while index >= 0 {
                    try merge(rollups[index], id: key.id, on: connection)
                    index = next[index]
                }
            }
        }
    }

    /// The stored rows of `keys` (whose first rollups are `rollups[firsts…]`): a rollup for each that decodes, nil
    /// for one that does not (reported), no entry for a row that is not there.
    private func read(
        _ keys: ArraySlice<WindowRowKey>, firsts: ArraySlice<Int>, rollups: [Rollup],
        on connection: TableConnection
    ) throws -> [WindowRowKey: Rollup?] {
        let database = connection.database
        var values: [SQLValue] = []
        values.reserveCapacity(2 * keys.count)
        var firstOfKey: [WindowRowKey: Int] = [:]
        firstOfKey.reserveCapacity(keys.count)
        for (key, index) in zip(keys, firsts) {
            values.append(.integer(key.id))
            values.append(.integer(key.windowStart))
            firstOfKey[key] = index
        }
        var stored: [WindowRowKey: Rollup?] = [:]
        stored.reserveCapacity(keys.count)
        let sql = Self.sql(.read(locking: !database.forUpdate.isEmpty), name: name, count: keys.count) {
            // A join from the keys rather than `(id, window_start) IN (VALUES …)`, which SQLite answers with a scan
            // of the whole table.
            let lock = database.forUpdate.isEmpty ? "" : database.forUpdate + " OF m"
            return """
                WITH k (id, window_start) AS (VALUES \(Self.keyTuples(keys.count)))
                SELECT m.\(Self.idColumn), m.window_start, \(Self.valueColumns.list(alias: "m"))
                FROM k JOIN \(name) m ON m.\(Self.idColumn) = k.id AND m.window_start = k.window_start\(lock)
                """
        }
        try database.query(sql, values) { row in
            let key = WindowRowKey(id: try row.int64(0), windowStart: try row.int64(1))
            guard let index = firstOfKey[key] else { return }
            stored[key] = .some(
                try connection.decodeStored(name) {
                    try Self.decode(
                        row, offset: 2, key: rollups[index].rollupKey, windowStart: key.windowStart)
                })
        }
        return stored
    }

    /// Writes `values` (whole rows, ``columns`` order) over the rows that are there: one multi-row upsert per
    /// ``BulkChunks`` run.
    private func upsert(_ values: [SQLValue], on connection: TableConnection) throws {
        let count = values.count / Self.columns.count
        for chunk in BulkChunks.ranges(count: count) {
            let sql = Self.sql(.upsert, name: name, count: chunk.count) {
                """
                INSERT INTO \(name) (\(Self.columns.list())) VALUES \(Self.rowTuples(chunk.count))
                ON CONFLICT (\(Self.idColumn), window_start) DO UPDATE SET \(Self.valueColumns.fromExcluded)
                """
            }
            let width = Self.columns.count
            try connection.database.update(sql, Array(values[chunk.lowerBound * width..<chunk.upperBound * width]))
        }
    }

    /// Inserts `values` (whole rows of `keys`, ``columns`` order) where no row is; returns the keys of the rows that
    /// were there after all (a concurrent writer inserted them since the read), which are not written.
    ///
    /// Where the writer holds the whole database (SQLite: no `FOR UPDATE`, one writer under `BEGIN IMMEDIATE`), no
    /// row can appear between the read and the insert, so the rows go in without `RETURNING` (which made SQLite
    /// keep every inserted key in a temporary table) and the count of rows written is checked instead.
    private func insert(_ values: [SQLValue], keys: [WindowRowKey], on connection: TableConnection) throws
        -> [WindowRowKey]
    {
        let width = Self.columns.count
        if connection.database.forUpdate.isEmpty {
            for chunk in BulkChunks.ranges(count: keys.count) {
                let sql = Self.sql(.insertLocked, name: name, count: chunk.count) {
                    """
                    INSERT INTO \(name) (\(Self.columns.list())) VALUES \(Self.rowTuples(chunk.count))
                    ON CONFLICT (\(Self.idColumn), window_start) DO NOTHING
                    """
                }
                let written = try connection.database.update(
                    sql, Array(values[chunk.lowerBound * width..<chunk.upperBound * width]))
                guard written == chunk.count else {
                    throw RollupStoreError(
                        .conflict, "\(chunk.count - written) rows of \(name) appeared under the writer's lock",
                        isRetriable: true)
                }
            }
            return []
        }
        var written = Set<WindowRowKey>()
        for chunk in BulkChunks.ranges(count: keys.count) {
            let sql = Self.sql(.insert, name: name, count: chunk.count) {
                """
                INSERT INTO \(name) (\(Self.columns.list())) VALUES \(Self.rowTuples(chunk.count))
                ON CONFLICT (\(Self.idColumn), window_start) DO NOTHING RETURNING \(Self.idColumn), window_start
                """
            }
            try connection.database.query(
                sql, Array(values[chunk.lowerBound * width..<chunk.upperBound * width])
            ) { row in
                written.insert(WindowRowKey(id: try row.int64(0), windowStart: try row.int64(1)))
            }
        }
        guard written.count < keys.count else { return [] }
        return keys.filter { !written.contains($0) }
    }

    /// The text of a bulk statement of `count` rows of table `name`, made once per process.
    private static func sql(_ kind: BulkSQL.Kind, name: String, count: Int, make: () -> String) -> String {
        BulkSQL.text(BulkSQL.Key(kind: kind, table: name, count: count), make: make)
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
