import CSQLite

/// A prepared SQLite statement: bind, step, read columns. Owned by its connection, which finalizes it.
final class SQLiteStatement {
    private let handle: OpaquePointer
    private unowned let connection: SQLiteConnection

    init(handle: OpaquePointer, connection: SQLiteConnection) {
        self.handle = handle
        self.connection = connection
    }

    func finalize() { sqlite3_finalize(handle) }

    /// Makes the statement ready to run again; bindings are cleared too.
    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Binds `values` to parameters 1…n.
    func bind(_ values: [SQLValue]) throws {
        for (offset, value) in values.enumerated() {
            try bind(value, at: Int32(offset + 1))
        }
    }

    func bind(_ value: SQLValue, at index: Int32) throws {
        let code: Int32
        switch value {
        case .null:
            code = sqlite3_bind_null(handle, index)
        case .integer(let integer):
            code = sqlite3_bind_int64(handle, index, integer)
        case .text(let text):
            // Bound with its byte length: a length of -1 would make SQLite stop at the first U+0000, so a value
            // would go in as one string and come out as another.
            var text = text
            code = text.withUTF8 { utf8 in
                // An empty string's buffer may have no address; a nil pointer would bind NULL instead of ''.
                let bytes = UnsafeRawPointer(utf8.baseAddress ?? UnsafePointer(bitPattern: 1)!)
                return sqlite3_bind_text(
                    handle, index, bytes.assumingMemoryBound(to: CChar.self), Int32(utf8.count), sqliteTransient)
            }
        case .blob(let bytes):
            code = bytes.withUnsafeBytes { buffer in
                // A zero-length blob with a nil pointer would bind NULL.
                sqlite3_bind_blob(
                    handle, index, buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(buffer.count),
                    sqliteTransient)
            }
        }
        try connection.check(code)
    }

    /// Advances to the next row; false when the statement is done.
    func step() throws -> Bool {
        let code = sqlite3_step(handle)
        if code == SQLITE_ROW { return true }
        if code == SQLITE_DONE { return false }
        try connection.check(code)
        return false
    }

    func isNullColumn(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    func int64Column(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    func textColumn(_ column: Int32) -> String {
        guard let pointer = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    func blobColumn(_ column: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count > 0, let pointer = sqlite3_column_blob(handle, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }
}

// SQLITE_TRANSIENT is a macro that Swift cannot import: it tells SQLite to copy the bound bytes before returning.
private let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
