import FlowmeterModels

/// Reads ``StoreStats``: rows, bytes and window span of every table, on one reader connection.
enum StoreStatsReader {
    /// The schema's tables in schema order, and whether each has a `window_start`.
    static let tables: [(name: String, hasWindows: Bool)] = [
        (SeriesTable.name, false), (SeriesWindowTable.minutes.name, true), (SeriesWindowTable.hours.name, true),
        (VersionTable.name, false), (VersionWindowTable.minutes.name, true), (VersionWindowTable.hours.name, true),
        (TypeFirstSeenTable.name, false), (AppliedMessagesTable.name, false), (DeploysTable.name, false),
        (AlertsTable.name, false), (WatermarksTable.name, false), (RetentionHorizonsTable.name, false),
        (ManifestsTable.name, false), (SinkPartitionsTable.name, false), (SinkPartitionsTable.counted, false),
        ("schema_version", false),
    ]

    static func stats(on connection: TableConnection) throws -> StoreStats {
        let database = connection.database
        var tables: [StoreStats.Table] = []
        for (name, hasWindows) in Self.tables {
            var table = StoreStats.Table(name: name, rows: 0)
            let span = hasWindows ? ", MIN(window_start), MAX(window_start)" : ""
            try database.query("SELECT CAST(COUNT(*) AS BIGINT)\(span) FROM \(name)", []) { row in
                table.rows = try row.int64(0)
                if hasWindows && !row.isNull(1) {
                    table.oldestWindow = Timestamp(secondsSinceEpoch: try row.int64(1))
                    table.newestWindow = Timestamp(secondsSinceEpoch: try row.int64(2))
                }
            }
            table.bytes = try database.tableBytes(name)
            tables.append(table)
        }
        let storage = try database.storageBytes()
        return StoreStats(
            tables: tables, totalBytes: storage.total, freeBytes: storage.free,
            reclaimsIncrementally: try database.reclaimsIncrementally(),
            retention: try RetentionHorizonsTable.horizon(on: connection),
            schemaVersion: try RollupSchema.currentVersion(database))
    }
}
