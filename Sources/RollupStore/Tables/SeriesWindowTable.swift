import FlowmeterModels
import Rollups

/// `series_minutes` and `series_hours`: a series' events, installs, first and last seen, releases and samples per
/// minute, and the same merged per hour so that 30-day baselines read 720 rows per series instead of 43,200.
struct SeriesWindowTable: WindowTable {
    let isHours: Bool

    static let minutes = SeriesWindowTable(isHours: false)
    static let hours = SeriesWindowTable(isHours: true)

    var name: String { isHours ? "series_hours" : "series_minutes" }

    static let idColumn = "series_id"
    static let valueColumns: SQLColumns = [
        "events", "installs", "first_seen_s", "first_seen_ns", "last_seen_s", "last_seen_ns", "releases", "samples",
    ]

    /// The sketch and samples of a stored row as read, each with what it decoded to when it was in the form
    /// writing that gives (nil otherwise).
    struct StoredBlobs {
        var installs: HyperLogLog?
        var installsBytes: [UInt8]
        var samples: [RollupSample]?
        var samplesBytes: [UInt8]
    }

    static func appendValues(of rollup: SeriesRollup, stored: StoredBlobs?, to values: inout [SQLValue]) {
        values.append(.integer(rollup.events))
        if let stored, let installs = stored.installs, installs == rollup.installs {
            values.append(.blob(stored.installsBytes))
        } else {
            values.append(.blob(rollup.installs.serialized()))
        }
        values.append(.integer(rollup.firstSeen.secondsSinceEpoch))
        values.append(.integer(Int64(rollup.firstSeen.nanoseconds)))
        values.append(.integer(rollup.lastSeen.secondsSinceEpoch))
        values.append(.integer(Int64(rollup.lastSeen.nanoseconds)))
        values.append(.blob(RollupBlobCodec.encode(releases: rollup.releases)))
        if let stored, let samples = stored.samples, samples == rollup.samples {
            values.append(.blob(stored.samplesBytes))
        } else {
            values.append(.blob(RollupBlobCodec.encode(samples: rollup.samples)))
        }
    }

    static func decodeKeepingBlobs(_ row: any SQLRow, offset: Int32, key: RollupSeries, windowStart: Int64) throws
        -> (rollup: SeriesRollup, blobs: StoredBlobs)
    {
        let installsBytes = try row.blob(offset + 1)
        let installs = try StoredValue.sketch(installsBytes)
        let samplesBytes = try row.blob(offset + 7)
        var samplesAreCanonical = true
        let samples = try RollupBlobCodec.decodeSamples(samplesBytes, isCanonical: &samplesAreCanonical)
        var rollup = SeriesRollup(
            series: key, window: try StoredValue.window(windowStart), events: try row.int64(offset),
            installs: installs,
            firstSeen: try StoredValue.timestamp(
                seconds: try row.int64(offset + 2), nanoseconds: try row.int64(offset + 3)),
            lastSeen: try StoredValue.timestamp(
                seconds: try row.int64(offset + 4), nanoseconds: try row.int64(offset + 5)),
            releases: try RollupBlobCodec.decodeReleases(try row.blob(offset + 6)))
        // As the initializer bounds them, without sorting samples that are (as written) sorted and bounded already.
        let isBounded = SeriesRollup.isBounded(samples)
        rollup.samples = isBounded ? samples : SeriesRollup.boundedSamples(samples)
        let blobs = StoredBlobs(
            installs: RollupBlobCodec.isCanonical(sketch: installsBytes, of: installs) ? installs : nil,
            installsBytes: installsBytes, samples: samplesAreCanonical && isBounded ? samples : nil,
            samplesBytes: samplesBytes)
        return (rollup, blobs)
    }

    // MARK: - Reads

    /// The minute rollups `query` selects, ordered by window, then series; rows that do not decode are skipped and
    /// reported. Where retention deleted the minutes, the hour rows stand in (one per hour, at its start).
    static func rollups(_ query: SeriesQuery, on connection: TableConnection) throws -> [SeriesRollup] {
        let range = WindowRange.starts(from: query.from, to: query.to)
        guard range.lowerBound < range.upperBound else { return [] }
        let horizon = try RetentionHorizonsTable.minutesBefore(on: connection)
        var rollups: [SeriesRollup] = []
        for part in WindowRange.coarsened(range, isHours: false, minutesBefore: horizon) {
            rollups += try read(part.isHours ? hours : minutes, part.range, query, on: connection)
        }
        return rollups.sorted { $0.window != $1.window ? $0.window < $1.window : $0.series < $1.series }
    }

    private static func read(
        _ table: SeriesWindowTable, _ range: Range<Int64>, _ query: SeriesQuery, on connection: TableConnection
    ) throws -> [SeriesRollup] {
        var (filter, values) = seriesFilter(query, firstParameter: 3)
        values.insert(contentsOf: [.integer(range.lowerBound), .integer(range.upperBound)], at: 0)
        // id, the series' columns, window_start, then the rollup's columns.
        let windowStartColumn = Int32(1 + SeriesTable.columns.count)
        var seriesByID: [Int64: RollupSeries] = [:]
        var rollups: [SeriesRollup] = []
        var skipped = SkippedRows(table.name)
        try connection.database.query(
            """
            SELECT s.id, \(SeriesTable.columns.list(alias: "s")), m.window_start, \(valueColumns.list(alias: "m"))
            FROM \(SeriesTable.name) s JOIN \(table.name) m ON m.\(idColumn) = s.id
            WHERE m.window_start >= $1 AND m.window_start < $2\(filter)
            """, values
        ) { row in
            try connection.readRow(&skipped) {
                let id = try row.int64(0)
                let series = try seriesByID[id] ?? SeriesTable.decode(row, offset: 1)
                seriesByID[id] = series
                rollups.append(
                    try decode(
                        row, offset: windowStartColumn + 1, key: series,
                        windowStart: try row.int64(windowStartColumn)))
            }
        }
        connection.report(skipped)
        return rollups
    }

    /// Events per series per bucket of `bucketSeconds`, summed in SQL; whole hours read the hour table.
    static func buckets(_ query: SeriesQuery, bucketSeconds: Int64, on connection: TableConnection) throws
        -> [SeriesBucket]
    {
        guard bucketSeconds > 0 else { throw RollupStoreError(.queryFailed, "bucketSeconds must be positive") }
        let range = WindowRange.starts(from: query.from, to: query.to)
        guard range.lowerBound < range.upperBound else { return [] }
        let (filter, filterValues) = seriesFilter(query, firstParameter: 4)
        var sums: [BucketKey: Int64] = [:]
        var skipped = SkippedRows(SeriesTable.name)
        let horizon = try RetentionHorizonsTable.minutesBefore(on: connection)
        let parts = WindowRange.split(range, bucketSeconds: bucketSeconds).flatMap {
            WindowRange.coarsened($0.range, isHours: $0.isHours, minutesBefore: horizon)
        }
        for part in parts {
            let table = part.isHours ? hours : minutes
            try connection.database.query(
                """
                SELECT m.\(idColumn), m.window_start - ((m.window_start % $3) + $3) % $3 AS bucket,
                CAST(SUM(m.events) AS BIGINT)
                FROM \(SeriesTable.name) s JOIN \(table.name) m ON m.\(idColumn) = s.id
                WHERE m.window_start >= $1 AND m.window_start < $2\(filter)
                GROUP BY m.\(idColumn), bucket
                """,
                [.integer(part.range.lowerBound), .integer(part.range.upperBound), .integer(bucketSeconds)]
                    + filterValues
            ) { row in
                try connection.readRow(&skipped) {
                    let key = BucketKey(id: try row.int64(0), bucketStart: try row.int64(1))
                    sums[key, default: 0] += try row.int64(2)
                }
            }
        }
        let ids = Set(sums.keys.map(\.id))
        let series = ids.isEmpty ? [:] : try SeriesTable.keys(skipped: &skipped, on: connection, where: ids.contains)
        // Buckets of a series row that did not decode were counted with it; they are left out.
        let buckets = sums.compactMap { key, events in
            series[key.id].map { SeriesBucket(series: $0, bucketStart: key.bucketStart, events: events) }
        }
        connection.report(skipped)
        return
            buckets.sorted {
                $0.bucketStart != $1.bucketStart ? $0.bucketStart < $1.bucketStart : $0.series < $1.series
            }
    }

    /// The `AND …` filters of a series query over table alias `s`, numbered from `firstParameter`.
    static func seriesFilter(_ query: SeriesQuery, firstParameter: Int) -> (sql: String, values: [SQLValue]) {
        var sql = ""
        var values: [SQLValue] = []
        func parameter(_ value: SQLValue) -> String {
            values.append(value)
            return "$\(firstParameter + values.count - 1)"
        }
        if let appID = query.appID { sql += " AND s.app_id = \(parameter(.text(appID)))" }
        if let configuration = query.buildConfiguration {
            sql += " AND s.build_configuration = \(parameter(.text(configuration.rawValue)))"
        }
        if let version = query.appVersion { sql += " AND s.app_version = \(parameter(.text(version)))" }
        if let kinds = query.kinds {
            let list = kinds.map(\.rawValue).sorted().map { parameter(.text($0)) }
            sql += list.isEmpty ? " AND 1 = 0" : " AND s.kind IN (\(list.joined(separator: ", ")))"
        }
        if let widgetTypes = query.widgetTypes {
            let list = widgetTypes.sorted().map { parameter(.text($0)) }
            sql += list.isEmpty ? " AND 1 = 0" : " AND s.widget_type IN (\(list.joined(separator: ", ")))"
        }
        return (sql, values)
    }
}
