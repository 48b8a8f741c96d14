import FlowmeterModels
import Rollups

/// `type_first_seen`: the earliest `firstSeen` per (kind, buildConfiguration, appID, widgetType), kept up to date on
/// every apply, so the new-type rule needs no scan of the minute rows.
enum TypeFirstSeenTable {
    static let name = "type_first_seen"
    /// The primary key, in its declared order.
    static let keyColumns: SQLColumns = ["kind", "build_configuration", "app_id", "widget_type"]
    static let valueColumns: SQLColumns = ["first_seen_s", "first_seen_ns"]
    static var columns: SQLColumns { keyColumns + valueColumns }

    /// The row `rollup` records, in ``columns`` order.
    static func row(of rollup: SeriesRollup) -> [SQLValue] {
        let series = rollup.series
        return [
            .text(series.kind.rawValue), .text(series.buildConfiguration.rawValue), .text(series.appID),
            .text(series.widgetType), .integer(rollup.firstSeen.secondsSinceEpoch),
            .integer(Int64(rollup.firstSeen.nanoseconds)),
        ]
    }

    /// The record a row holds, read in ``columns`` order; `kind` is the one the read selected.
    static func decode(_ row: any SQLRow, kind: DiagnosticKind) throws -> TypeFirstSeen {
        TypeFirstSeen(
            appID: try row.text(2), widgetType: try row.text(3), kind: kind,
            firstSeen: try StoredValue.timestamp(seconds: try row.int64(4), nanoseconds: try row.int64(5)))
    }

    /// Records `rollup.firstSeen` for its type unless an earlier one is recorded.
    static func record(_ rollup: SeriesRollup, on connection: TableConnection) throws {
        try connection.database.update(
            """
            INSERT INTO \(name) (\(columns.list())) VALUES (\(columns.placeholders()))
            ON CONFLICT (\(keyColumns.list())) DO UPDATE SET \(valueColumns.fromExcluded)
            WHERE excluded.first_seen_s < \(name).first_seen_s
            OR (excluded.first_seen_s = \(name).first_seen_s AND excluded.first_seen_ns < \(name).first_seen_ns)
            """, row(of: rollup))
    }

    /// Records the earliest `firstSeen` of every type among `rollups`, with the same result as ``record(_:on:)`` for
    /// each: the rollups are reduced to one row per type in memory, then written with one multi-row upsert per
    /// ``BulkChunks`` run.
    static func record(_ rollups: [SeriesRollup], on connection: TableConnection) throws {
        // Per type the index of its earliest rollup (no copy of one), in the order the types first come.
        var earliest: [TypeKey: Int] = [:]
        earliest.reserveCapacity(rollups.count)
        var order: [TypeKey] = []
        for index in rollups.indices {
            let key = TypeKey(rollups[index].series)
            if let kept = earliest[key] {
                if rollups[index].firstSeen < rollups[kept].firstSeen { earliest[key] = index }
            } else {
                earliest[key] = index
                order.append(key)
            }
        }
        let width = columns.count
        var values: [SQLValue] = []
        for chunk in BulkChunks.ranges(count: order.count) {
            values.removeAll(keepingCapacity: true)
            values.reserveCapacity(chunk.count * width)
            for key in order[chunk] {
                let firstSeen = rollups[earliest[key]!].firstSeen
                values.append(.text(key.kind.rawValue))
                values.append(.text(key.buildConfiguration.rawValue))
                values.append(.text(key.appID))
                values.append(.text(key.widgetType))
                values.append(.integer(firstSeen.secondsSinceEpoch))
                values.append(.integer(Int64(firstSeen.nanoseconds)))
            }
            let sql = BulkSQL.text(BulkSQL.Key(kind: .upsert, table: name, count: chunk.count)) {
                let tuples = (0..<chunk.count).map { "(\(columns.placeholders(from: 1 + $0 * columns.count)))" }
                return """
                    INSERT INTO \(name) (\(columns.list())) VALUES \(tuples.joined(separator: ", "))
                    ON CONFLICT (\(keyColumns.list())) DO UPDATE SET \(valueColumns.fromExcluded)
                    WHERE excluded.first_seen_s < \(name).first_seen_s
                    OR (excluded.first_seen_s = \(name).first_seen_s AND excluded.first_seen_ns < \(name).first_seen_ns)
                    """
            }
            try connection.database.update(sql, values)
        }
    }

    /// The primary key of a row.
    private struct TypeKey: Hashable {
        var kind: DiagnosticKind
        var buildConfiguration: BuildConfiguration
        var appID: String
        var widgetType: String

        init(_ series: RollupSeries) {
            kind = series.kind
            buildConfiguration = series.buildConfiguration
            appID = series.appID
            widgetType = series.widgetType
        }

        /// The two free strings only: the kind and configuration would hash their raw-value strings too, and keys
        /// that differ only there still compare unequal.
        func hash(into hasher: inout Hasher) {
            hasher.combine(appID)
            hasher.combine(widgetType)
        }
    }

    /// The earliest `firstSeen` per (appID, widgetType) of `kind` in `buildConfiguration` (of `appID` when given),
    /// ordered by appID, then widget type by UTF-8 bytes; rows that do not decode are skipped and reported.
    static func records(
        appID: String?, kind: DiagnosticKind, buildConfiguration: BuildConfiguration, on connection: TableConnection
    ) throws -> [TypeFirstSeen] {
        var records: [TypeFirstSeen] = []
        var skipped = SkippedRows(name)
        try connection.database.query(
            """
            SELECT \(columns.list()) FROM \(name)
            WHERE kind = $1 AND build_configuration = $2\(appID == nil ? "" : " AND app_id = $3")
            """,
            [.text(kind.rawValue), .text(buildConfiguration.rawValue)] + (appID.map { [.text($0)] } ?? [])
        ) { row in
            try connection.readRow(&skipped) { records.append(try decode(row, kind: kind)) }
        }
        connection.report(skipped)
        return records.sorted {
            $0.appID != $1.appID
                ? $0.appID.utf8.lexicographicallyPrecedes($1.appID.utf8)
                : $0.widgetType.utf8.lexicographicallyPrecedes($1.widgetType.utf8)
        }
    }
}
