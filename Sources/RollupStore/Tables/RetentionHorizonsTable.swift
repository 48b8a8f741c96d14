import FlowmeterModels
import Rollups

/// `retention_horizons`: before which window start retention deleted the minute rows (`minutes`) and the hour rows
/// (`hours`). Reads of minutes before the first are answered from the hour rows.
enum RetentionHorizonsTable {
    static let name = "retention_horizons"
    static let columns: SQLColumns = ["row_kind", "before_s"]

    /// The rows a horizon is kept for.
    enum RowKind: String {
        case minutes, hours
    }

    /// The stored horizons (nil where retention never deleted anything).
    static func horizon(on connection: TableConnection) throws -> RetentionHorizon {
        var horizon = RetentionHorizon()
        try connection.database.query("SELECT \(columns.list()) FROM \(name)", []) { row in
            let before = Timestamp(secondsSinceEpoch: try row.int64(1))
            switch RowKind(rawValue: try row.text(0)) {
            case .minutes: horizon.minutesBefore = before
            case .hours: horizon.hoursBefore = before
            case nil: break
            }
        }
        return horizon
    }

    /// The minute horizon in epoch seconds, for reads that switch to hour rows before it.
    static func minutesBefore(on connection: TableConnection) throws -> Int64? {
        var before: Int64?
        try connection.database.query(
            "SELECT before_s FROM \(name) WHERE row_kind = $1", [.text(RowKind.minutes.rawValue)]
        ) { row in before = try row.int64(0) }
        return before
    }

    /// Moves the horizon of `kind` to `before` (epoch seconds), never back; inside the caller's transaction.
    static func advance(_ kind: RowKind, to before: Int64, on connection: TableConnection) throws {
        try connection.database.update(
            """
            INSERT INTO \(name) (\(columns.list())) VALUES (\(columns.placeholders()))
            ON CONFLICT (row_kind) DO UPDATE SET before_s = excluded.before_s WHERE excluded.before_s > \(name).before_s
            """, [.text(kind.rawValue), .integer(before)])
    }
}
