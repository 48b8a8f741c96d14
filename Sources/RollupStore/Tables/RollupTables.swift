import FlowmeterModels
import Foundation
import Rollups

/// The rollup tables' reads and writes over one connection, the same SQL for SQLite and PostgreSQL.
///
/// Each minute rollup is merged into its minute row and into its hour row in the same transaction, so 30-day
/// baselines read hours (720 rows per series) instead of minutes (43,200). Merges are read-modify-write in Swift with
/// the `Rollups` merge laws (HyperLogLog, bounded releases and samples do not merge in SQL); the row is read
/// `FOR UPDATE` where the database has row locks, and a concurrent first insert is resolved by
/// `ON CONFLICT DO NOTHING` followed by a re-read.
struct RollupTables {
    let database: any SQLDatabase
    /// Told once per read (or merge) that met rows it could not decode; see ``UnreadableRows``.
    var onUnreadableRows: @Sendable (UnreadableRows) -> Void = { _ in }

    // MARK: - Writes

    /// Series and version ids are immutable once committed, so the writer keeps them across transactions.
    struct IDCache {
        var series: [RollupSeries: Int64] = [:]
        var versions: [VersionKey: Int64] = [:]
    }

    /// Applies `partials` in one transaction, skipping ids applied before, and prunes applied ids older than
    /// `pruneBefore` (epoch seconds).
    func apply(
        _ partials: [PartialRollup], now: Int64, pruneBefore: Int64, cache: inout IDCache
    ) throws -> RollupApplyResult {
        var pending = IDCache()
        let result = try database.writeTransaction {
            var result = RollupApplyResult(applied: 0, duplicates: 0)
            for partial in partials {
                let inserted = try database.update(
                    "INSERT INTO applied_messages (id, applied_at) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING",
                    [.text(partial.id), .integer(now)])
                guard inserted == 1 else {
                    result.duplicates += 1
                    continue
                }
                result.applied += 1
                switch partial.rollup {
                case .series(let rollup):
                    let id = try seriesID(rollup.series, cache: cache, pending: &pending)
                    try mergeSeries(rollup, id: id, table: "series_minutes", windowStart: rollup.window.start)
                    try mergeSeries(
                        rollup, id: id, table: "series_hours", windowStart: Self.hourStart(rollup.window.start))
                    try recordFirstSeen(rollup)
                case .version(let rollup):
                    let id = try versionID(rollup.key, cache: cache, pending: &pending)
                    try mergeVersion(rollup, id: id, table: "version_minutes", windowStart: rollup.window.start)
                    try mergeVersion(
                        rollup, id: id, table: "version_hours", windowStart: Self.hourStart(rollup.window.start))
                }
            }
            try database.update("DELETE FROM applied_messages WHERE applied_at < $1", [.integer(pruneBefore)])
            return result
        }
        // Only ids from a committed transaction may outlive it.
        cache.series.merge(pending.series) { old, _ in old }
        cache.versions.merge(pending.versions) { old, _ in old }
        return result
    }

    /// Writes rollups for windows that hold no rows yet, in bulk (prepared statement or COPY), with their hour
    /// rows and first-seen times; for filling a benchmark database fast. No applied ids are recorded.
    func bulkLoad(series rollups: [SeriesRollup], versions: [VersionRollup], cache: inout IDCache) throws {
        var pending = IDCache()
        try database.writeTransaction {
            var minutes: [[SQLValue]] = []
            minutes.reserveCapacity(rollups.count)
            var hours: [BucketKey: SeriesRollup] = [:]
            var earliest: [RollupSeries: SeriesRollup] = [:]
            for rollup in rollups {
                let id = try seriesID(rollup.series, cache: cache, pending: &pending)
                minutes.append(Self.seriesValues(rollup, id: id))
                let hour = Self.hourStart(rollup.window.start)
                var hourly = rollup
                hourly.window = MinuteWindow(start: hour)
                let key = BucketKey(id: id, bucketStart: hour)
                if hours[key] == nil { hours[key] = hourly } else { hours[key]!.merge(hourly) }
                if earliest[rollup.series].map({ rollup.firstSeen < $0.firstSeen }) ?? true {
                    earliest[rollup.series] = rollup
                }
            }
            let seriesColumns = [
                "series_id", "window_start", "events", "installs", "first_seen_s", "first_seen_ns", "last_seen_s",
                "last_seen_ns", "releases", "samples",
            ]
            try database.bulkInsert(table: "series_minutes", columns: seriesColumns, rows: minutes)
            try database.bulkInsert(
                table: "series_hours", columns: seriesColumns,
                rows: hours.map { Self.seriesValues($0.value, id: $0.key.id) })
            for rollup in earliest.values { try recordFirstSeen(rollup) }

            var versionMinutes: [[SQLValue]] = []
            var versionHours: [BucketKey: VersionRollup] = [:]
            for rollup in versions {
                let id = try versionID(rollup.key, cache: cache, pending: &pending)
                versionMinutes.append(Self.versionValues(rollup, id: id))
                let hour = Self.hourStart(rollup.window.start)
                var hourly = rollup
                hourly.window = MinuteWindow(start: hour)
                let key = BucketKey(id: id, bucketStart: hour)
                if versionHours[key] == nil { versionHours[key] = hourly } else { versionHours[key]!.merge(hourly) }
            }
            let versionColumns = [
                "version_id", "window_start", "batches", "clean_batches", "decodes", "installs", "registered_types",
                "max_schema_version", "client_discarded",
            ]
            try database.bulkInsert(table: "version_minutes", columns: versionColumns, rows: versionMinutes)
            try database.bulkInsert(
                table: "version_hours", columns: versionColumns,
                rows: versionHours.map { Self.versionValues($0.value, id: $0.key.id) })
        }
        cache.series.merge(pending.series) { old, _ in old }
        cache.versions.merge(pending.versions) { old, _ in old }
    }

    private func seriesID(_ series: RollupSeries, cache: IDCache, pending: inout IDCache) throws -> Int64 {
        if let id = cache.series[series] ?? pending.series[series] { return id }
        let values: [SQLValue] = [
            .text(series.appID), .text(series.platform), .text(series.appVersion),
            .text(series.buildConfiguration.rawValue), .text(series.kind.rawValue), .text(series.widgetType),
        ]
        try database.update(
            """
            INSERT INTO series (app_id, platform, app_version, build_configuration, kind, widget_type)
            VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING
            """, values)
        var id: Int64?
        try database.query(
            """
            SELECT id FROM series WHERE app_id = $1 AND platform = $2 AND app_version = $3
            AND build_configuration = $4 AND kind = $5 AND widget_type = $6
            """, values
        ) { id = try $0.int64(0) }
        guard let id else { throw RollupStoreError(.invalidData, "Series row vanished after insert: \(series)") }
        pending.series[series] = id
        return id
    }

    private func versionID(_ key: VersionKey, cache: IDCache, pending: inout IDCache) throws -> Int64 {
        if let id = cache.versions[key] ?? pending.versions[key] { return id }
        let values: [SQLValue] = [
            .text(key.appID), .text(key.platform), .text(key.appVersion), .text(key.buildConfiguration.rawValue),
        ]
        try database.update(
            """
            INSERT INTO versions (app_id, platform, app_version, build_configuration)
            VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING
            """, values)
        var id: Int64?
        try database.query(
            """
            SELECT id FROM versions WHERE app_id = $1 AND platform = $2 AND app_version = $3
            AND build_configuration = $4
            """, values
        ) { id = try $0.int64(0) }
        guard let id else { throw RollupStoreError(.invalidData, "Version row vanished after insert: \(key)") }
        pending.versions[key] = id
        return id
    }

    private func mergeSeries(_ rollup: SeriesRollup, id: Int64, table: String, windowStart: Int64) throws {
        var incoming = rollup
        incoming.window = MinuteWindow(start: windowStart)
        // Two rounds at most: a concurrent writer can win the first insert, after which the row exists.
        for _ in 0..<2 {
            var stored: SeriesRollup?
            var isUnreadable = false
            try database.query(
                """
                SELECT events, installs, first_seen_s, first_seen_ns, last_seen_s, last_seen_ns, releases, samples
                FROM \(table) WHERE series_id = $1 AND window_start = $2\(database.forUpdate)
                """, [.integer(id), .integer(windowStart)]
            ) { row in
                // A stored row that no longer decodes is replaced by the incoming rollup (and reported), so one
                // bad row never stalls the sink's partition.
                stored = try decodeStored(table) {
                    try Self.seriesRollup(row, offset: 0, series: rollup.series, windowStart: windowStart)
                }
                isUnreadable = stored == nil
            }
            if isUnreadable { stored = incoming }
            if var stored {
                if !isUnreadable { stored.merge(incoming) }
                try database.update(
                    """
                    UPDATE \(table) SET events = $3, installs = $4, first_seen_s = $5, first_seen_ns = $6,
                    last_seen_s = $7, last_seen_ns = $8, releases = $9, samples = $10
                    WHERE series_id = $1 AND window_start = $2
                    """, Self.seriesValues(stored, id: id))
                return
            }
            let inserted = try database.update(
                """
                INSERT INTO \(table) (series_id, window_start, events, installs, first_seen_s, first_seen_ns,
                last_seen_s, last_seen_ns, releases, samples) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
                ON CONFLICT (series_id, window_start) DO NOTHING
                """, Self.seriesValues(incoming, id: id))
            if inserted == 1 { return }
        }
        throw RollupStoreError(.conflict, "Could not merge into \(table) row \(id)/\(windowStart)", isRetriable: true)
    }

    private func mergeVersion(_ rollup: VersionRollup, id: Int64, table: String, windowStart: Int64) throws {
        var incoming = rollup
        incoming.window = MinuteWindow(start: windowStart)
        for _ in 0..<2 {
            var stored: VersionRollup?
            var isUnreadable = false
            try database.query(
                """
                SELECT batches, clean_batches, decodes, installs, registered_types, max_schema_version, client_discarded
                FROM \(table) WHERE version_id = $1 AND window_start = $2\(database.forUpdate)
                """, [.integer(id), .integer(windowStart)]
            ) { row in
                // A stored row that no longer decodes is replaced by the incoming rollup (and reported), so one
                // bad row never stalls the sink's partition.
                stored = try decodeStored(table) {
                    try Self.versionRollup(row, offset: 0, key: rollup.key, windowStart: windowStart)
                }
                isUnreadable = stored == nil
            }
            if isUnreadable { stored = incoming }
            if var stored {
                if !isUnreadable { stored.merge(incoming) }
                try database.update(
                    """
                    UPDATE \(table) SET batches = $3, clean_batches = $4, decodes = $5, installs = $6,
                    registered_types = $7, max_schema_version = $8, client_discarded = $9
                    WHERE version_id = $1 AND window_start = $2
                    """, Self.versionValues(stored, id: id))
                return
            }
            let inserted = try database.update(
                """
                INSERT INTO \(table) (version_id, window_start, batches, clean_batches, decodes, installs,
                registered_types, max_schema_version, client_discarded) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
                ON CONFLICT (version_id, window_start) DO NOTHING
                """, Self.versionValues(incoming, id: id))
            if inserted == 1 { return }
        }
        throw RollupStoreError(.conflict, "Could not merge into \(table) row \(id)/\(windowStart)", isRetriable: true)
    }

    private func recordFirstSeen(_ rollup: SeriesRollup) throws {
        let series = rollup.series
        try database.update(
            """
            INSERT INTO type_first_seen (app_id, build_configuration, kind, widget_type, first_seen_s, first_seen_ns)
            VALUES ($1, $2, $3, $4, $5, $6)
            ON CONFLICT (kind, build_configuration, app_id, widget_type) DO UPDATE
            SET first_seen_s = excluded.first_seen_s, first_seen_ns = excluded.first_seen_ns
            WHERE excluded.first_seen_s < type_first_seen.first_seen_s
            OR (excluded.first_seen_s = type_first_seen.first_seen_s
                AND excluded.first_seen_ns < type_first_seen.first_seen_ns)
            """,
            [
                .text(series.appID), .text(series.buildConfiguration.rawValue), .text(series.kind.rawValue),
                .text(series.widgetType), .integer(rollup.firstSeen.secondsSinceEpoch),
                .integer(Int64(rollup.firstSeen.nanoseconds)),
            ])
    }

    func recordDeploy(_ deploy: DeployMarker) throws {
        try database.writeTransaction {
            try database.update(
                """
                INSERT INTO deploys (id, finished_s, finished_ns, marker) VALUES ($1, $2, $3, $4)
                ON CONFLICT (id) DO UPDATE SET finished_s = excluded.finished_s, finished_ns = excluded.finished_ns,
                marker = excluded.marker
                """,
                [
                    .text(deploy.id), .integer(deploy.finishedAt.secondsSinceEpoch),
                    .integer(Int64(deploy.finishedAt.nanoseconds)), .blob(deploy.jsonBytes()),
                ])
        }
    }

    func saveAlertState(_ alerts: [AlertState]) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        // A ratio against a zero baseline is infinite; JSON has no such number.
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "+Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        let rows = try alerts.map { alert -> [SQLValue] in
            [.text(alert.fingerprint), .integer(alert.isOpen ? 1 : 0), .blob([UInt8](try encoder.encode(alert)))]
        }
        try database.writeTransaction {
            for row in rows {
                try database.update(
                    """
                    INSERT INTO alerts (fingerprint, is_open, state) VALUES ($1, $2, $3)
                    ON CONFLICT (fingerprint) DO UPDATE SET is_open = excluded.is_open, state = excluded.state
                    """, row)
            }
        }
    }

    // MARK: - Reads

    func seriesRollups(_ query: SeriesQuery) throws -> [SeriesRollup] {
        let range = Self.windowRange(from: query.from, to: query.to)
        guard range.lowerBound < range.upperBound else { return [] }
        var (filter, values) = Self.seriesFilter(query, firstParameter: 3)
        values.insert(contentsOf: [.integer(range.lowerBound), .integer(range.upperBound)], at: 0)
        var seriesByID: [Int64: RollupSeries] = [:]
        var rollups: [SeriesRollup] = []
        var skipped = SkippedRows("series_minutes")
        try database.query(
            """
            SELECT s.id, s.app_id, s.platform, s.app_version, s.build_configuration, s.kind, s.widget_type,
            m.window_start, m.events, m.installs, m.first_seen_s, m.first_seen_ns, m.last_seen_s, m.last_seen_ns,
            m.releases, m.samples
            FROM series s JOIN series_minutes m ON m.series_id = s.id
            WHERE m.window_start >= $1 AND m.window_start < $2\(filter)
            """, values
        ) { row in
            try readRow(&skipped) {
                let id = try row.int64(0)
                let series = try seriesByID[id] ?? Self.series(row, offset: 1)
                seriesByID[id] = series
                rollups.append(try Self.seriesRollup(row, offset: 8, series: series, windowStart: try row.int64(7)))
            }
        }
        report(skipped)
        return rollups.sorted { $0.window != $1.window ? $0.window < $1.window : $0.series < $1.series }
    }

    func seriesBuckets(_ query: SeriesQuery, bucketSeconds: Int64) throws -> [SeriesBucket] {
        guard bucketSeconds > 0 else { throw RollupStoreError(.queryFailed, "bucketSeconds must be positive") }
        let range = Self.windowRange(from: query.from, to: query.to)
        guard range.lowerBound < range.upperBound else { return [] }
        let (filter, filterValues) = Self.seriesFilter(query, firstParameter: 4)
        var sums: [BucketKey: Int64] = [:]
        var skipped = SkippedRows("series")
        for part in Self.split(range, bucketSeconds: bucketSeconds) {
            try database.query(
                """
                SELECT m.series_id, m.window_start - ((m.window_start % $3) + $3) % $3 AS bucket,
                CAST(SUM(m.events) AS BIGINT)
                FROM series s JOIN \(part.isHours ? "series_hours" : "series_minutes") m ON m.series_id = s.id
                WHERE m.window_start >= $1 AND m.window_start < $2\(filter)
                GROUP BY m.series_id, bucket
                """,
                [.integer(part.range.lowerBound), .integer(part.range.upperBound), .integer(bucketSeconds)]
                    + filterValues
            ) { row in
                try readRow(&skipped) {
                    let key = BucketKey(id: try row.int64(0), bucketStart: try row.int64(1))
                    sums[key, default: 0] += try row.int64(2)
                }
            }
        }
        let series = try seriesByID(Set(sums.keys.map(\.id)), skipped: &skipped)
        // Buckets of a series row that did not decode were counted with it; they are left out.
        let buckets = sums.compactMap { key, events in
            series[key.id].map { SeriesBucket(series: $0, bucketStart: key.bucketStart, events: events) }
        }
        report(skipped)
        return
            buckets.sorted {
                $0.bucketStart != $1.bucketStart ? $0.bucketStart < $1.bucketStart : $0.series < $1.series
            }
    }

    func versionRollups(from: Timestamp, to: Timestamp, appID: String?) throws -> [VersionRollup] {
        let range = Self.windowRange(from: from, to: to)
        guard range.lowerBound < range.upperBound else { return [] }
        var keys: [Int64: VersionKey] = [:]
        var rollups: [VersionRollup] = []
        var skipped = SkippedRows("version_minutes")
        try database.query(
            """
            SELECT v.id, v.app_id, v.platform, v.app_version, v.build_configuration, m.window_start,
            m.batches, m.clean_batches, m.decodes, m.installs, m.registered_types, m.max_schema_version,
            m.client_discarded
            FROM versions v JOIN version_minutes m ON m.version_id = v.id
            WHERE m.window_start >= $1 AND m.window_start < $2\(appID == nil ? "" : " AND v.app_id = $3")
            """, [.integer(range.lowerBound), .integer(range.upperBound)] + (appID.map { [.text($0)] } ?? [])
        ) { row in
            try readRow(&skipped) {
                let id = try row.int64(0)
                let key = try keys[id] ?? Self.versionKey(row, offset: 1)
                keys[id] = key
                rollups.append(try Self.versionRollup(row, offset: 6, key: key, windowStart: try row.int64(5)))
            }
        }
        report(skipped)
        return rollups.sorted { $0.window != $1.window ? $0.window < $1.window : $0.key < $1.key }
    }

    func versionBuckets(from: Timestamp, to: Timestamp, appID: String?, bucketSeconds: Int64) throws -> [VersionBucket]
    {
        guard bucketSeconds > 0 else { throw RollupStoreError(.queryFailed, "bucketSeconds must be positive") }
        let range = Self.windowRange(from: from, to: to)
        guard range.lowerBound < range.upperBound else { return [] }
        var sums: [BucketKey: (batches: Int64, clean: Int64, decodes: Int64)] = [:]
        var skipped = SkippedRows("versions")
        for part in Self.split(range, bucketSeconds: bucketSeconds) {
            try database.query(
                """
                SELECT m.version_id, m.window_start - ((m.window_start % $3) + $3) % $3 AS bucket,
                CAST(SUM(m.batches) AS BIGINT), CAST(SUM(m.clean_batches) AS BIGINT), CAST(SUM(m.decodes) AS BIGINT)
                FROM versions v JOIN \(part.isHours ? "version_hours" : "version_minutes") m ON m.version_id = v.id
                WHERE m.window_start >= $1 AND m.window_start < $2\(appID == nil ? "" : " AND v.app_id = $4")
                GROUP BY m.version_id, bucket
                """,
                [.integer(part.range.lowerBound), .integer(part.range.upperBound), .integer(bucketSeconds)]
                    + (appID.map { [.text($0)] } ?? [])
            ) { row in
                try readRow(&skipped) {
                    let key = BucketKey(id: try row.int64(0), bucketStart: try row.int64(1))
                    let old = sums[key] ?? (0, 0, 0)
                    sums[key] = (
                        old.batches + (try row.int64(2)), old.clean + (try row.int64(3)),
                        old.decodes + (try row.int64(4))
                    )
                }
            }
        }
        var keys: [Int64: VersionKey] = [:]
        if !sums.isEmpty {
            try database.query("SELECT id, app_id, platform, app_version, build_configuration FROM versions", []) {
                row in
                try readRow(&skipped) { keys[try row.int64(0)] = try Self.versionKey(row, offset: 1) }
            }
        }
        let buckets = sums.compactMap { key, sum in
            keys[key.id].map {
                VersionBucket(
                    key: $0, bucketStart: key.bucketStart, batches: sum.batches, cleanBatches: sum.clean,
                    decodes: sum.decodes)
            }
        }
        report(skipped)
        return
            buckets.sorted { $0.bucketStart != $1.bucketStart ? $0.bucketStart < $1.bucketStart : $0.key < $1.key }
    }

    func firstSeen(appID: String?, kind: DiagnosticKind, buildConfiguration: BuildConfiguration) throws
        -> [TypeFirstSeen]
    {
        var records: [TypeFirstSeen] = []
        var skipped = SkippedRows("type_first_seen")
        try database.query(
            """
            SELECT app_id, widget_type, first_seen_s, first_seen_ns FROM type_first_seen
            WHERE kind = $1 AND build_configuration = $2\(appID == nil ? "" : " AND app_id = $3")
            """,
            [.text(kind.rawValue), .text(buildConfiguration.rawValue)] + (appID.map { [.text($0)] } ?? [])
        ) { row in
            try readRow(&skipped) {
                records.append(
                    TypeFirstSeen(
                        appID: try row.text(0), widgetType: try row.text(1), kind: kind,
                        firstSeen: try Self.timestamp(seconds: try row.int64(2), nanoseconds: try row.int64(3))))
            }
        }
        report(skipped)
        return records.sorted {
            $0.appID != $1.appID
                ? $0.appID.utf8.lexicographicallyPrecedes($1.appID.utf8)
                : $0.widgetType.utf8.lexicographicallyPrecedes($1.widgetType.utf8)
        }
    }

    func deploys(from: Timestamp, to: Timestamp) throws -> [DeployMarker] {
        var markers: [DeployMarker] = []
        var skipped = SkippedRows("deploys")
        // The index narrows by whole seconds; the exact half-open range on the full timestamp is checked below.
        try database.query(
            "SELECT marker FROM deploys WHERE finished_s >= $1 AND finished_s <= $2",
            [.integer(from.secondsSinceEpoch), .integer(to.secondsSinceEpoch)]
        ) { row in
            try readRow(&skipped) {
                do {
                    markers.append(try DeployMarker(jsonBytes: try row.blob(0)))
                } catch let error as RollupsError {
                    throw RollupStoreError(.invalidData, "Stored deploy marker does not decode: \(error.message)")
                }
            }
        }
        report(skipped)
        return markers.filter { from <= $0.finishedAt && $0.finishedAt < to }
            .sorted {
                $0.finishedAt != $1.finishedAt
                    ? $0.finishedAt < $1.finishedAt : $0.id.utf8.lexicographicallyPrecedes($1.id.utf8)
            }
    }

    func openAlerts() throws -> [AlertState] {
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: "+Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        var alerts: [AlertState] = []
        var skipped = SkippedRows("alerts")
        try database.query("SELECT state FROM alerts WHERE is_open = 1", []) { row in
            try readRow(&skipped) {
                do {
                    alerts.append(try decoder.decode(AlertState.self, from: Data(try row.blob(0))))
                } catch let error as RollupStoreError {
                    throw error
                } catch {
                    throw RollupStoreError(.invalidData, "Stored alert state does not decode: \(error)")
                }
            }
        }
        report(skipped)
        return alerts.sorted { $0.fingerprint.utf8.lexicographicallyPrecedes($1.fingerprint.utf8) }
    }

    // MARK: - Helpers

    private struct BucketKey: Hashable {
        var id: Int64
        var bucketStart: Int64
    }

    private func seriesByID(_ ids: Set<Int64>, skipped: inout SkippedRows) throws -> [Int64: RollupSeries] {
        var series: [Int64: RollupSeries] = [:]
        guard !ids.isEmpty else { return series }
        try database.query(
            "SELECT id, app_id, platform, app_version, build_configuration, kind, widget_type FROM series", []
        ) { row in
            try readRow(&skipped) {
                let id = try row.int64(0)
                if ids.contains(id) { series[id] = try Self.series(row, offset: 1) }
            }
        }
        return series
    }

    /// `decode()`, or nil after reporting the row when it does not decode (``UnreadableRows``).
    private func decodeStored<T>(_ table: String, _ decode: () throws -> T) throws -> T? {
        do {
            return try decode()
        } catch let error as RollupStoreError where error.code == .invalidData {
            var skipped = SkippedRows(table)
            skipped.record(error)
            report(skipped)
            return nil
        }
    }

    /// Runs `decode` for one row of a read; a row that does not decode is counted in `skipped` instead of failing
    /// the read.
    private func readRow(_ skipped: inout SkippedRows, _ decode: () throws -> Void) throws {
        do {
            try decode()
        } catch let error as RollupStoreError where error.code == .invalidData {
            skipped.record(error)
        }
    }

    private func report(_ skipped: SkippedRows) {
        if let report = skipped.report { onUnreadableRows(report) }
    }

    /// The window starts `from..<to` selects: the smallest start at or after `from`, up to the first at or after `to`.
    static func windowRange(from: Timestamp, to: Timestamp) -> Range<Int64> {
        let lower = from.secondsSinceEpoch + (from.nanoseconds > 0 ? 1 : 0)
        let upper = to.secondsSinceEpoch + (to.nanoseconds > 0 ? 1 : 0)
        return lower..<max(lower, upper)
    }

    /// The parts of `range` to read: whole hours from the hour table when every hour falls inside one bucket
    /// (`bucketSeconds` a multiple of 3600), the ragged minutes at either end from the minute table.
    static func split(_ range: Range<Int64>, bucketSeconds: Int64) -> [(range: Range<Int64>, isHours: Bool)] {
        guard bucketSeconds % 3600 == 0 else { return [(range, false)] }
        let firstHour = ceilToHour(range.lowerBound)
        let lastHour = hourStart(range.upperBound)
        guard firstHour < lastHour else { return [(range, false)] }
        var parts: [(range: Range<Int64>, isHours: Bool)] = [(firstHour..<lastHour, true)]
        if range.lowerBound < firstHour { parts.append((range.lowerBound..<firstHour, false)) }
        if lastHour < range.upperBound { parts.append((lastHour..<range.upperBound, false)) }
        return parts
    }

    static func hourStart(_ seconds: Int64) -> Int64 {
        seconds >= 0 ? seconds / 3600 * 3600 : (seconds - 3599) / 3600 * 3600
    }

    private static func ceilToHour(_ seconds: Int64) -> Int64 {
        let floor = hourStart(seconds)
        return floor == seconds ? floor : floor + 3600
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

    static func seriesValues(_ rollup: SeriesRollup, id: Int64) -> [SQLValue] {
        [
            .integer(id), .integer(rollup.window.start), .integer(rollup.events), .blob(rollup.installs.serialized()),
            .integer(rollup.firstSeen.secondsSinceEpoch), .integer(Int64(rollup.firstSeen.nanoseconds)),
            .integer(rollup.lastSeen.secondsSinceEpoch), .integer(Int64(rollup.lastSeen.nanoseconds)),
            .blob(RollupBlobCodec.encode(releases: rollup.releases)),
            .blob(RollupBlobCodec.encode(samples: rollup.samples)),
        ]
    }

    static func versionValues(_ rollup: VersionRollup, id: Int64) -> [SQLValue] {
        [
            .integer(id), .integer(rollup.window.start), .integer(rollup.batches), .integer(rollup.cleanBatches),
            .integer(rollup.decodes), .blob(rollup.installs.serialized()),
            .blob(RollupBlobCodec.encode(strings: rollup.registeredTypes)),
            rollup.maxSchemaVersion.map { .integer(Int64($0)) } ?? .null, .integer(rollup.clientDiscarded),
        ]
    }

    private static func series(_ row: any SQLRow, offset: Int32) throws -> RollupSeries {
        let configuration = try row.text(offset + 3)
        let kind = try row.text(offset + 4)
        guard let buildConfiguration = BuildConfiguration(rawValue: configuration),
            let diagnosticKind = DiagnosticKind(rawValue: kind)
        else {
            throw RollupStoreError(
                .invalidData,
                "Stored series has build configuration \(String(reflecting: configuration)), kind \(String(reflecting: kind))"
            )
        }
        let series = RollupSeries(
            appID: try row.text(offset), platform: try row.text(offset + 1), appVersion: try row.text(offset + 2),
            buildConfiguration: buildConfiguration, kind: diagnosticKind, widgetType: try row.text(offset + 5))
        // The collector only writes identifiers (IdentifierRule); a row edited by hand may hold anything.
        for value in [series.appID, series.platform, series.appVersion, series.widgetType]
        where IdentifierRule.violation(in: value) == .controlCharacter {
            throw RollupStoreError(
                .invalidData, "Stored series has a control character in \(String(reflecting: value))")
        }
        return series
    }

    private static func versionKey(_ row: any SQLRow, offset: Int32) throws -> VersionKey {
        let configuration = try row.text(offset + 3)
        guard let buildConfiguration = BuildConfiguration(rawValue: configuration) else {
            throw RollupStoreError(
                .invalidData, "Stored version has build configuration \(String(reflecting: configuration))")
        }
        return VersionKey(
            appID: try row.text(offset), platform: try row.text(offset + 1), appVersion: try row.text(offset + 2),
            buildConfiguration: buildConfiguration)
    }

    /// Reads events, installs, first seen (2), last seen (2), releases, samples from `offset` on.
    private static func seriesRollup(
        _ row: any SQLRow, offset: Int32, series: RollupSeries, windowStart: Int64
    ) throws -> SeriesRollup {
        SeriesRollup(
            series: series, window: try window(windowStart), events: try row.int64(offset),
            installs: try sketch(try row.blob(offset + 1)),
            firstSeen: try timestamp(seconds: try row.int64(offset + 2), nanoseconds: try row.int64(offset + 3)),
            lastSeen: try timestamp(seconds: try row.int64(offset + 4), nanoseconds: try row.int64(offset + 5)),
            releases: try RollupBlobCodec.decodeReleases(try row.blob(offset + 6)),
            samples: try RollupBlobCodec.decodeSamples(try row.blob(offset + 7)))
    }

    /// Reads batches, clean batches, decodes, installs, registered types, max schema version, client discarded
    /// from `offset` on.
    private static func versionRollup(
        _ row: any SQLRow, offset: Int32, key: VersionKey, windowStart: Int64
    ) throws -> VersionRollup {
        VersionRollup(
            key: key, window: try window(windowStart), batches: try row.int64(offset),
            cleanBatches: try row.int64(offset + 1), decodes: try row.int64(offset + 2),
            installs: try sketch(try row.blob(offset + 3)),
            registeredTypes: try RollupBlobCodec.decodeStrings(try row.blob(offset + 4)),
            maxSchemaVersion: row.isNull(offset + 5) ? nil : Int(try row.int64(offset + 5)),
            clientDiscarded: try row.int64(offset + 6))
    }

    private static func window(_ start: Int64) throws -> MinuteWindow {
        guard start % 60 == 0 else {
            throw RollupStoreError(.invalidData, "Stored window start \(start) is not a minute")
        }
        return MinuteWindow(start: start)
    }

    private static func sketch(_ bytes: [UInt8]) throws -> HyperLogLog {
        do {
            return try HyperLogLog(serialized: bytes)
        } catch {
            throw RollupStoreError(.invalidData, "Stored install sketch does not decode: \(error)")
        }
    }

    private static func timestamp(seconds: Int64, nanoseconds: Int64) throws -> Timestamp {
        guard nanoseconds >= 0 && nanoseconds < 1_000_000_000 else {
            throw RollupStoreError(.invalidData, "Stored nanoseconds \(nanoseconds) out of range")
        }
        return Timestamp(secondsSinceEpoch: seconds, nanoseconds: Int32(nanoseconds))
    }
}
