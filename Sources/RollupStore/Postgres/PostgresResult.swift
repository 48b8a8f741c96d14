import CLibPQ

/// The rows of one PostgreSQL statement, in binary result format; frees its `PGresult` when released.
///
/// Columns are read by type: the SQL casts every column to `bigint`, `text` or `bytea`, so the binary forms are known.
final class PostgresResult {
    private let handle: OpaquePointer

    init(handle: OpaquePointer) {
        self.handle = handle
    }

    deinit { PQclear(handle) }

    /// How many rows the statement returned.
    var count: Int { Int(PQntuples(handle)) }

    /// How many rows an INSERT, UPDATE or DELETE changed.
    var affectedRows: Int { Int(String(cString: PQcmdTuples(handle))) ?? 0 }

    func isNull(_ row: Int, _ column: Int32) -> Bool { PQgetisnull(handle, Int32(row), column) == 1 }

    /// A `bigint`, `integer` or `smallint` column.
    func int64(_ row: Int, _ column: Int32) throws -> Int64 {
        let bytes = try rawBytes(row, column)
        guard [2, 4, 8].contains(bytes.count) else {
            throw RollupStoreError(.invalidData, "Column \(column) holds \(bytes.count) bytes, not an integer")
        }
        var value: Int64 = bytes[0] >= 0x80 ? -1 : 0
        for byte in bytes { value = (value << 8) | Int64(byte) }
        return value
    }

    func text(_ row: Int, _ column: Int32) throws -> String {
        String(decoding: try rawBytes(row, column), as: UTF8.self)
    }

    func bytea(_ row: Int, _ column: Int32) throws -> [UInt8] { try rawBytes(row, column) }

    private func rawBytes(_ row: Int, _ column: Int32) throws -> [UInt8] {
        guard row < count, column < PQnfields(handle) else {
            throw RollupStoreError(.invalidData, "No row \(row), column \(column) in a result of \(count) rows")
        }
        let length = Int(PQgetlength(handle, Int32(row), column))
        guard length > 0, let pointer = PQgetvalue(handle, Int32(row), column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: length))
    }
}
