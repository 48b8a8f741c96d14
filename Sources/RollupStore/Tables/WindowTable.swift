import Rollups

/// A minute or hour table of one rollup kind: one row per key id and window start, merged with the `Rollups` laws.
///
/// Merges are read-modify-write in Swift (HyperLogLog, bounded releases and samples do not merge in SQL): the row is
/// read `FOR UPDATE` where the database has row locks, and a concurrent first insert is resolved by
/// `ON CONFLICT DO NOTHING` followed by a re-read.
protocol WindowTable {
    associatedtype Rollup: WindowedRollup
    /// What a bulk read keeps of a stored row beside the rollup it decodes to: the blobs as read, each with the value
    /// it decoded to when writing that value again gives the same bytes, so a merge that leaves it unchanged writes
    /// the bytes read rather than encoding them again.
    associatedtype StoredBlobs
    /// `series_minutes`, `series_hours`, …
    var name: String { get }
    /// Whether a row holds the hour that starts at `window_start` rather than the minute.
    var isHours: Bool { get }
    /// The column that points to the key's id: `series_id` or `version_id`.
    static var idColumn: String { get }
    /// The rollup's columns after the id and `window_start`, in the order of ``appendValues(of:stored:to:)`` and
    /// ``decode``.
    static var valueColumns: SQLColumns { get }
    /// Appends `rollup`'s counts, sketch and lists as the values of ``valueColumns`` to `values`; a blob whose value
    /// `stored` (the row as read, before the merge) holds unchanged goes in as the bytes read.
    static func appendValues(of rollup: Rollup, stored: StoredBlobs?, to values: inout [SQLValue])
    /// The rollup held by ``valueColumns`` read from column `offset` on, and what the row's blobs were
    /// (``StoredBlobs``); throws `invalidData` when it does not decode.
    static func decodeKeepingBlobs(_ row: any SQLRow, offset: Int32, key: Rollup.Key, windowStart: Int64) throws
        -> (rollup: Rollup, blobs: StoredBlobs)
}

extension WindowTable {
    /// The rollup held by ``valueColumns`` read from column `offset` on (``decodeKeepingBlobs``, without the blobs).
    static func decode(_ row: any SQLRow, offset: Int32, key: Rollup.Key, windowStart: Int64) throws -> Rollup {
        try decodeKeepingBlobs(row, offset: offset, key: key, windowStart: windowStart).rollup
    }

    /// Every column of a row: the id, `window_start`, then ``valueColumns``.
    static var columns: SQLColumns { [idColumn, "window_start"] + valueColumns }

    /// `rollup`'s counts, sketch and lists as the values of ``valueColumns``.
    static func values(of rollup: Rollup) -> [SQLValue] {
        var values: [SQLValue] = []
        values.reserveCapacity(valueColumns.count)
        appendValues(of: rollup, stored: nil, to: &values)
        return values
    }

    /// The row of `rollup` under key id `id`, in ``columns`` order.
    static func row(of rollup: Rollup, id: Int64) -> [SQLValue] {
        var values: [SQLValue] = [.integer(id), .integer(rollup.window.start)]
        values.reserveCapacity(2 + valueColumns.count)
        appendValues(of: rollup, stored: nil, to: &values)
        return values
    }

    /// Appends the row of `rollup` under key id `id` at window start `windowStart` (its minute, or the hour a lone
    /// minute starts a row of) to `values`, without a row array of its own.
    static func appendRow(
        of rollup: Rollup, id: Int64, windowStart: Int64, stored: StoredBlobs?, to values: inout [SQLValue]
    ) {
        values.append(.integer(id))
        values.append(.integer(windowStart))
        appendValues(of: rollup, stored: stored, to: &values)
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

    /// One word hashed rather than two: keys that collide here still compare unequal.
    func hash(into hasher: inout Hasher) {
        hasher.combine(UInt64(bitPattern: id) &* 0x9E37_79B9_7F4A_7C15 ^ UInt64(bitPattern: windowStart))
    }
}

/// The stored rows of one chunk of a bulk merge, by their position in the chunk.
struct StoredWindowRows<Rollup, Blobs> {
    /// Whether a row is there (decoded or not).
    var isThere: [Bool]
    /// The rollup a row decodes to, nil for a row that is not there or does not decode (reported); moved out (with
    /// `Optional.take()`) so the merge into it copies nothing.
    var rollups: [Rollup?]
    /// What the row's blobs were, for the rows that decode.
    var blobs: [Blobs?]
    /// How many rows are there.
    var count = 0

    init(count: Int) {
        isThere = Array(repeating: false, count: count)
        rollups = Array(repeating: nil, count: count)
        blobs = Array(repeating: nil, count: count)
    }

}

extension WindowTable {
    /// Merges every rollup of `rollups` into its row (`rollups[i]` under key id `ids[i]`), with the same result as calling ``merge(_:id:on:)`` for each in
    /// order, in a few statements per ``bulkRows`` rows instead of two or three per rollup.
    ///
    /// The rollups of one row (an hour's minutes) are merged into it in their order. The stored rows are read in
    /// chunks (a join from `VALUES` of the keys, `FOR UPDATE` where the database has row locks) and decoded once;
    /// the rows that were there are written back with multi-row upserts, and the new ones inserted with
    /// `ON CONFLICT DO NOTHING … RETURNING`: a row a concurrent writer inserted in between (PostgreSQL) is merged
    /// again by ``merge(_:id:on:)``, so no writer's counts are lost. A stored row that no longer decodes is replaced
    /// by the incoming rollups and reported, as ``merge(_:id:on:)`` does.
    ///
    /// Nothing is copied per row: a stored rollup is moved out of what the read decoded and merged into in place
    /// (the minutes of an hour row merged whatever their window, ``WindowedRollup/merge(contentsOf:)``), a new row
    /// of one rollup is written from the rollup as it came, and every statement's values are appended to one array
    /// as the rows are merged, its blobs the bytes read where the merge left them unchanged.
    func merge(_ rollups: [Rollup], ids: [Int64], on connection: TableConnection) throws {
        // The rows in the order their first rollup comes, and each row's rollups as a chain of indices into
        // `rollups` (no array, and no copy of a rollup, per row).
        var rows: [WindowRowKey] = []
        var rowOfKey: [WindowRowKey: Int] = [:]
        var first: [Int] = []
        var last: [Int] = []
        var next = [Int](repeating: -1, count: rollups.count)
        rows.reserveCapacity(rollups.count)
        rowOfKey.reserveCapacity(rollups.count)
        first.reserveCapacity(rollups.count)
        last.reserveCapacity(rollups.count)
        for index in rollups.indices {
            let key = WindowRowKey(id: ids[index], windowStart: windowStart(of: rollups[index]))
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
        let width = Self.columns.count
        let isLocked = connection.database.forUpdate.isEmpty
        var updates = BulkStatementRows(kind: .upsert, width: width)
        var inserts = BulkStatementRows(kind: isLocked ? .insertLocked : .insert, width: width)
        var lost: [WindowRowKey] = []
        for chunk in BulkChunks.ranges(count: rows.count) {
            var stored = try read(rows[chunk], firsts: first[chunk], rollups: rollups, on: connection)
            updates.begin(rows: stored.count)
            inserts.begin(rows: chunk.count - stored.count)
            for position in 0..<chunk.count {
                let row = chunk.lowerBound + position
                let key = rows[row]
                var index = first[row]
                let isThere = stored.isThere[position]
                var merged: Rollup
                var blobs: StoredBlobs?
                if let rollup = stored.rollups[position].take() {
                    // Moved, not copied: the merge into it then copies nothing it holds.
                    merged = consume rollup
                    blobs = stored.blobs[position].take()
                } else if !isThere && next[index] < 0 {
                    // A new row of one rollup: written as it came, no copy.
                    Self.appendRow(
                        of: rollups[index], id: key.id, windowStart: key.windowStart, stored: nil,
                        to: &inserts.values)
                    try finish(&inserts, key: key, lost: &lost, on: connection)
                    continue
                } else {
                    // No row, or one that does not decode: the incoming rollups replace it.
                    merged = rollups[index]
                    merged.window = MinuteWindow(start: key.windowStart)
                    index = next[index]
                }
                while index >= 0 {
                    merged.merge(contentsOf: rollups[index])
                    index = next[index]
                }
                if isThere {
                    Self.appendRow(
                        of: merged, id: key.id, windowStart: key.windowStart, stored: blobs, to: &updates.values)
                    try finish(&updates, key: key, lost: &lost, on: connection)
                } else {
                    Self.appendRow(
                        of: merged, id: key.id, windowStart: key.windowStart, stored: nil, to: &inserts.values)
                    try finish(&inserts, key: key, lost: &lost, on: connection)
                }
            }
            for key in lost {
                // A concurrent writer inserted the row after the read: merge into it one rollup at a time.
                var index = first[rowOfKey[key]!]
                while index >= 0 {
                    try merge(rollups[index], id: key.id, on: connection)
                    index = next[index]
                }
            }
            lost.removeAll(keepingCapacity: true)
        }
    }

    /// Counts the row just appended to `rows` (of key `key`), and runs the statement once it holds the rows its
    /// ``BulkChunks`` run takes; keys of rows a concurrent writer inserted first go to `lost`.
    private func finish(
        _ rows: inout BulkStatementRows, key: WindowRowKey, lost: inout [WindowRowKey], on connection: TableConnection
    ) throws {
        if rows.kind == .insert { rows.keys.append(key) }
        guard rows.rowAppended() else { return }
        if rows.kind == .upsert {
            try upsert(rows, on: connection)
        } else {
            try insert(rows, lost: &lost, on: connection)
        }
        rows.statementDone()
    }

    /// Writes `rows` (whole rows, ``columns`` order) over the rows that are there: one multi-row upsert.
    private func upsert(_ rows: BulkStatementRows, on connection: TableConnection) throws {
        let count = rows.statementRows
        let sql = Self.sql(.upsert, name: name, count: count) {
            """
            INSERT INTO \(name) (\(Self.columns.list())) VALUES \(Self.rowTuples(count))
            ON CONFLICT (\(Self.idColumn), window_start) DO UPDATE SET \(Self.valueColumns.fromExcluded)
            """
        }
        try connection.database.update(sql, rows.values)
    }

    /// Inserts `rows` (whole rows, ``columns`` order) where no row is; the keys of the rows that were there after
    /// all (a concurrent writer inserted them since the read), which are not written, go to `lost`.
    ///
    /// Where the writer holds the whole database (SQLite: no `FOR UPDATE`, one writer under `BEGIN IMMEDIATE`), no
    /// row can appear between the read and the insert, so the rows go in without `RETURNING` (which made SQLite
    /// keep every inserted key in a temporary table) and the count of rows written is checked instead.
    private func insert(_ rows: BulkStatementRows, lost: inout [WindowRowKey], on connection: TableConnection) throws {
        let count = rows.statementRows
        let database = connection.database
        if rows.kind == .insertLocked {
            let sql = Self.sql(.insertLocked, name: name, count: count) {
                """
                INSERT INTO \(name) (\(Self.columns.list())) VALUES \(Self.rowTuples(count))
                ON CONFLICT (\(Self.idColumn), window_start) DO NOTHING
                """
            }
            let written = try database.update(sql, rows.values)
            guard written == count else {
                throw RollupStoreError(
                    .conflict, "\(count - written) rows of \(name) appeared under the writer's lock", isRetriable: true)
            }
            return
        }
        let sql = Self.sql(.insert, name: name, count: count) {
            """
            INSERT INTO \(name) (\(Self.columns.list())) VALUES \(Self.rowTuples(count))
            ON CONFLICT (\(Self.idColumn), window_start) DO NOTHING RETURNING \(Self.idColumn), window_start
            """
        }
        var written = Set<WindowRowKey>()
        try database.query(sql, rows.values) { row in
            written.insert(WindowRowKey(id: try row.int64(0), windowStart: try row.int64(1)))
        }
        if written.count < count { lost += rows.keys.filter { !written.contains($0) } }
    }

    /// The stored rows of `keys` (whose first rollups are `rollups[firsts…]`), by position: the rollup and blobs of
    /// each that decodes, nil for one that does not (reported) or is not there.
    private func read(
        _ keys: ArraySlice<WindowRowKey>, firsts: ArraySlice<Int>, rollups: [Rollup],
        on connection: TableConnection
    ) throws -> StoredWindowRows<Rollup, StoredBlobs> {
        let database = connection.database
        var values: [SQLValue] = []
        values.reserveCapacity(2 * keys.count)
        for key in keys {
            values.append(.integer(key.id))
            values.append(.integer(key.windowStart))
        }
        var stored = StoredWindowRows<Rollup, StoredBlobs>(count: keys.count)
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
        // The rows come in the keys' order on SQLite (the join walks `k`); anything else finds its key by lookup.
        var position = 0
        var positionOfKey: [WindowRowKey: Int]?
        try database.query(sql, values) { row in
            let key = WindowRowKey(id: try row.int64(0), windowStart: try row.int64(1))
            var found = position
            while found < keys.count, keys[keys.startIndex + found] != key { found += 1 }
            if found < keys.count {
                position = found + 1
            } else {
                if positionOfKey == nil {
                    positionOfKey = Dictionary(
                        zip(keys, 0..<keys.count), uniquingKeysWith: { first, _ in first })
                }
                guard let at = positionOfKey?[key] else { return }
                found = at
            }
            guard !stored.isThere[found] else { return }
            stored.isThere[found] = true
            stored.count += 1
            // Moved into place, not copied out of an optional.
            _ = try connection.decodeStored(name) {
                let (rollup, blobs) = try Self.decodeKeepingBlobs(
                    row, offset: 2, key: rollups[firsts[firsts.startIndex + found]].rollupKey,
                    windowStart: key.windowStart)
                stored.rollups[found] = consume rollup
                stored.blobs[found] = consume blobs
            }
        }
        return stored
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

/// The rows of the bulk statements of one kind that one chunk of a merge writes, appended as they are merged and
/// run a ``BulkChunks`` run at a time, so no statement's values are copied out of a larger array.
struct BulkStatementRows {
    let kind: BulkSQL.Kind
    /// Values per row.
    let width: Int
    /// The values of the statement being filled.
    var values: [SQLValue] = []
    /// Its rows' keys (only for inserts that return what they wrote).
    var keys: [WindowRowKey] = []
    /// The row counts of this chunk's statements, and which is being filled.
    private var runs: [Range<Int>] = []
    private var run = 0
    private var rows = 0

    init(kind: BulkSQL.Kind, width: Int) {
        self.kind = kind
        self.width = width
    }

    /// Starts a chunk that writes `rows` rows.
    mutating func begin(rows count: Int) {
        runs = BulkChunks.ranges(count: count)
        run = 0
        rows = 0
        if let first = runs.first { values.reserveCapacity(first.count * width) }
    }

    /// The rows the statement being filled takes.
    var statementRows: Int { runs[run].count }

    /// Counts a row appended; true when the statement is full and is to run.
    mutating func rowAppended() -> Bool {
        rows += 1
        return rows == runs[run].count
    }

    /// Empties the values after the statement ran, for the next one.
    mutating func statementDone() {
        values.removeAll(keepingCapacity: true)
        keys.removeAll(keepingCapacity: true)
        run += 1
        rows = 0
    }
}
