/// One connection as the table types use it: the database, and where a read reports rows it could not decode.
struct TableConnection {
    let database: any SQLDatabase
    /// Told once per read (or merge) that met rows it could not decode; see ``UnreadableRows``.
    let onUnreadableRows: @Sendable (UnreadableRows) -> Void

    /// Runs `decode` for one row of a read; a row that does not decode is counted in `skipped` instead of failing
    /// the read.
    func readRow(_ skipped: inout SkippedRows, _ decode: () throws -> Void) throws {
        do {
            try decode()
        } catch let error as RollupStoreError where error.code == .invalidData {
            skipped.record(error)
        }
    }

    /// `decode()`, or nil after reporting the row when it does not decode (``UnreadableRows``).
    func decodeStored<T>(_ table: String, _ decode: () throws -> T) throws -> T? {
        do {
            return try decode()
        } catch let error as RollupStoreError where error.code == .invalidData {
            var skipped = SkippedRows(table)
            skipped.record(error)
            report(skipped)
            return nil
        }
    }

    /// Tells ``onUnreadableRows`` what a read skipped, when it skipped anything.
    func report(_ skipped: SkippedRows) {
        if let report = skipped.report { onUnreadableRows(report) }
    }
}
