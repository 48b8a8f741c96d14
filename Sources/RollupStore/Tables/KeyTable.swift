/// A table that gives each key (a series, a version) an id: `id` and the key's columns, unique together.
///
/// Ids are immutable once committed, so callers cache them; a concurrent first insert of the same key is resolved by
/// `ON CONFLICT DO NOTHING` followed by a re-read.
protocol KeyTable {
    associatedtype Key: Hashable
    /// The table's name.
    static var name: String { get }
    /// What a row is called in an error (`Series`, `Version`).
    static var noun: String { get }
    /// The key's columns, in the order of ``values(of:)`` and ``decode(_:offset:)``.
    static var columns: SQLColumns { get }
    /// `key` as the values of ``columns``.
    static func values(of key: Key) -> [SQLValue]
    /// The key held by ``columns`` read from column `offset` on; throws `invalidData` when the row does not decode.
    static func decode(_ row: any SQLRow, offset: Int32) throws -> Key
}

extension KeyTable {
    /// The id of `key`: from `cached` or `pending`, else from its row, inserted when there is none. An id read from
    /// the database is added to `pending`, which the caller keeps only once the transaction commits.
    static func id(
        for key: Key, cached: [Key: Int64], pending: inout [Key: Int64], on connection: TableConnection
    ) throws -> Int64 {
        if let id = cached[key] ?? pending[key] { return id }
        let values = values(of: key)
        try connection.database.update(
            "INSERT INTO \(name) (\(columns.list())) VALUES (\(columns.placeholders())) ON CONFLICT DO NOTHING",
            values)
        var id: Int64?
        try connection.database.query("SELECT id FROM \(name) WHERE \(columns.matches(from: 1))", values) {
            id = try $0.int64(0)
        }
        guard let id else { throw RollupStoreError(.invalidData, "\(noun) row vanished after insert: \(key)") }
        pending[key] = id
        return id
    }

    /// The keys of the table's rows by id, of those ids `isWanted` accepts (every row by default); a row that does
    /// not decode is counted in `skipped` and left out.
    static func keys(
        skipped: inout SkippedRows, on connection: TableConnection, where isWanted: (Int64) -> Bool = { _ in true }
    ) throws -> [Int64: Key] {
        var keys: [Int64: Key] = [:]
        try connection.database.query("SELECT id, \(columns.list()) FROM \(name)", []) { row in
            try connection.readRow(&skipped) {
                let id = try row.int64(0)
                if isWanted(id) { keys[id] = try decode(row, offset: 1) }
            }
        }
        return keys
    }
}
