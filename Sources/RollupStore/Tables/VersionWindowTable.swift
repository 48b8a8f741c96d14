import FlowmeterModels
import Rollups

/// `version_minutes` and `version_hours`: an app build's batches, clean batches, decodes, installs, registered types,
/// highest schema version, events its SDK dropped on the device, batches and decodes per backend release and the
/// builds that sent its batches per minute, and the same merged per hour.
struct VersionWindowTable: WindowTable {
    let isHours: Bool

    static let minutes = VersionWindowTable(isHours: false)
    static let hours = VersionWindowTable(isHours: true)

    var name: String { isHours ? "version_hours" : "version_minutes" }

    static let idColumn = "version_id"
    static let valueColumns: SQLColumns = [
        "batches", "clean_batches", "decodes", "installs", "registered_types", "max_schema_version",
        // Migration 2.
        "client_discarded",
        // Migration 6: NULL in rows written before it, read as no release.
        "releases",
        // Migration 7: NULL in rows written before it, read as no build.
        "builds",
    ]

    /// The sketch and registered types of a stored row as read, each with what it decoded to when it was in the
    /// form writing that gives (nil otherwise).
    struct StoredBlobs {
        var installs: HyperLogLog?
        var installsBytes: [UInt8]
        var registeredTypes: Set<String>?
        var registeredTypesBytes: [UInt8]
    }

    static func appendValues(of rollup: VersionRollup, stored: StoredBlobs?, to values: inout [SQLValue]) {
        values.append(.integer(rollup.batches))
        values.append(.integer(rollup.cleanBatches))
        values.append(.integer(rollup.decodes))
        if let stored, let installs = stored.installs, installs == rollup.installs {
            values.append(.blob(stored.installsBytes))
        } else {
            values.append(.blob(rollup.installs.serialized()))
        }
        if let stored, let types = stored.registeredTypes, types == rollup.registeredTypes {
            values.append(.blob(stored.registeredTypesBytes))
        } else {
            values.append(.blob(RollupBlobCodec.encode(strings: rollup.registeredTypes)))
        }
        values.append(rollup.maxSchemaVersion.map { .integer(Int64($0)) } ?? .null)
        values.append(.integer(rollup.clientDiscarded))
        values.append(.blob(RollupBlobCodec.encode(releaseTraffic: rollup.releases)))
        values.append(.blob(RollupBlobCodec.encode(buildTraffic: rollup.builds)))
    }

    static func decodeKeepingBlobs(_ row: any SQLRow, offset: Int32, key: VersionKey, windowStart: Int64) throws
        -> (rollup: VersionRollup, blobs: StoredBlobs)
    {
        let installsBytes = try row.blob(offset + 3)
        let installs = try StoredValue.sketch(installsBytes)
        let typesBytes = try row.blob(offset + 4)
        var typesAreCanonical = true
        let types = try RollupBlobCodec.decodeStrings(typesBytes, isCanonical: &typesAreCanonical)
        let rollup = VersionRollup(
            key: key, window: try StoredValue.window(windowStart), batches: try row.int64(offset),
            cleanBatches: try row.int64(offset + 1), decodes: try row.int64(offset + 2), installs: installs,
            registeredTypes: types,
            maxSchemaVersion: row.isNull(offset + 5) ? nil : Int(try row.int64(offset + 5)),
            clientDiscarded: try row.int64(offset + 6),
            releases: row.isNull(offset + 7) ? [:] : try RollupBlobCodec.decodeReleaseTraffic(try row.blob(offset + 7)),
            builds: row.isNull(offset + 8) ? [:] : try RollupBlobCodec.decodeBuildTraffic(try row.blob(offset + 8)))
        let blobs = StoredBlobs(
            installs: RollupBlobCodec.isCanonical(sketch: installsBytes, of: installs) ? installs : nil,
            installsBytes: installsBytes, registeredTypes: typesAreCanonical ? types : nil,
            registeredTypesBytes: typesBytes)
        return (rollup, blobs)
    }

    // MARK: - Reads

    /// The minute rollups of every app build (of `appID` when given) in `from..<to`, ordered by window, then key;
    /// rows that do not decode are skipped and reported. Where retention deleted the minutes, the hour rows stand in.
    static func rollups(from: Timestamp, to: Timestamp, appID: String?, on connection: TableConnection) throws
        -> [VersionRollup]
    {
        let range = WindowRange.starts(from: from, to: to)
        guard range.lowerBound < range.upperBound else { return [] }
        let horizon = try RetentionHorizonsTable.minutesBefore(on: connection)
        var rollups: [VersionRollup] = []
        for part in WindowRange.coarsened(range, isHours: false, minutesBefore: horizon) {
            rollups += try read(part.isHours ? hours : minutes, part.range, appID: appID, on: connection)
        }
        return rollups.sorted { $0.window != $1.window ? $0.window < $1.window : $0.key < $1.key }
    }

    private static func read(
        _ table: VersionWindowTable, _ range: Range<Int64>, appID: String?, on connection: TableConnection
    ) throws -> [VersionRollup] {
        // id, the version's columns, window_start, then the rollup's columns.
        let windowStartColumn = Int32(1 + VersionTable.columns.count)
        var keys: [Int64: VersionKey] = [:]
        var rollups: [VersionRollup] = []
        var skipped = SkippedRows(table.name)
        try connection.database.query(
            """
            SELECT v.id, \(VersionTable.columns.list(alias: "v")), m.window_start, \(valueColumns.list(alias: "m"))
            FROM \(VersionTable.name) v JOIN \(table.name) m ON m.\(idColumn) = v.id
            WHERE m.window_start >= $1 AND m.window_start < $2\(appID == nil ? "" : " AND v.app_id = $3")
            """, [.integer(range.lowerBound), .integer(range.upperBound)] + (appID.map { [.text($0)] } ?? [])
        ) { row in
            try connection.readRow(&skipped) {
                let id = try row.int64(0)
                let key = try keys[id] ?? VersionTable.decode(row, offset: 1)
                keys[id] = key
                rollups.append(
                    try decode(
                        row, offset: windowStartColumn + 1, key: key, windowStart: try row.int64(windowStartColumn)))
            }
        }
        connection.report(skipped)
        return rollups
    }

    /// Batches, clean batches and decodes per app build per bucket of `bucketSeconds`, summed in SQL; whole hours
    /// read the hour table.
    static func buckets(
        from: Timestamp, to: Timestamp, appID: String?, bucketSeconds: Int64, on connection: TableConnection
    ) throws -> [VersionBucket] {
        guard bucketSeconds > 0 else { throw RollupStoreError(.queryFailed, "bucketSeconds must be positive") }
        let range = WindowRange.starts(from: from, to: to)
        guard range.lowerBound < range.upperBound else { return [] }
        var sums: [BucketKey: (batches: Int64, clean: Int64, decodes: Int64)] = [:]
        var skipped = SkippedRows(VersionTable.name)
        let horizon = try RetentionHorizonsTable.minutesBefore(on: connection)
        let parts = WindowRange.split(range, bucketSeconds: bucketSeconds).flatMap {
            WindowRange.coarsened($0.range, isHours: $0.isHours, minutesBefore: horizon)
        }
        for part in parts {
            let table = part.isHours ? hours : minutes
            try connection.database.query(
                """
                SELECT m.\(idColumn), m.window_start - ((m.window_start % $3) + $3) % $3 AS bucket,
                CAST(SUM(m.batches) AS BIGINT), CAST(SUM(m.clean_batches) AS BIGINT), CAST(SUM(m.decodes) AS BIGINT)
                FROM \(VersionTable.name) v JOIN \(table.name) m ON m.\(idColumn) = v.id
                WHERE m.window_start >= $1 AND m.window_start < $2\(appID == nil ? "" : " AND v.app_id = $4")
                GROUP BY m.\(idColumn), bucket
                """,
                [.integer(part.range.lowerBound), .integer(part.range.upperBound), .integer(bucketSeconds)]
                    + (appID.map { [.text($0)] } ?? [])
            ) { row in
                try connection.readRow(&skipped) {
                    let key = BucketKey(id: try row.int64(0), bucketStart: try row.int64(1))
                    let old = sums[key] ?? (0, 0, 0)
                    sums[key] = (
                        old.batches + (try row.int64(2)), old.clean + (try row.int64(3)),
                        old.decodes + (try row.int64(4))
                    )
                }
            }
        }
        // Every versions row is decoded here (and one that does not decode is reported), not only the ones summed.
        let keys = sums.isEmpty ? [:] : try VersionTable.keys(skipped: &skipped, on: connection)
        let buckets = sums.compactMap { key, sum in
            keys[key.id].map {
                VersionBucket(
                    key: $0, bucketStart: key.bucketStart, batches: sum.batches, cleanBatches: sum.clean,
                    decodes: sum.decodes)
            }
        }
        connection.report(skipped)
        return
            buckets.sorted { $0.bucketStart != $1.bucketStart ? $0.bucketStart < $1.bucketStart : $0.key < $1.key }
    }
}
