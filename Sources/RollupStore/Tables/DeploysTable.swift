import FlowmeterModels
import Rollups

/// `deploys`: deploy markers by id, with the finish time in two columns for the range index.
enum DeploysTable {
    static let name = "deploys"
    static let keyColumns: SQLColumns = ["id"]
    static let valueColumns: SQLColumns = ["finished_s", "finished_ns", "marker"]
    static var columns: SQLColumns { keyColumns + valueColumns }

    /// The row of `deploy`, in ``columns`` order.
    static func row(of deploy: DeployMarker) -> [SQLValue] {
        [
            .text(deploy.id), .integer(deploy.finishedAt.secondsSinceEpoch),
            .integer(Int64(deploy.finishedAt.nanoseconds)), .blob(deploy.jsonBytes()),
        ]
    }

    /// The marker a row holds, read in ``columns`` order; throws `invalidData` when it does not decode.
    static func decode(_ row: any SQLRow) throws -> DeployMarker {
        do {
            // Stored markers are read as they are; the identifier rule was the writer's to apply.
            return try DeployMarker(jsonBytes: try row.blob(3), checkingIdentifiers: false)
        } catch let error as RollupsError {
            throw RollupStoreError(.invalidData, "Stored deploy marker does not decode: \(error.message)")
        }
    }

    /// Stores `deploy` in its own transaction, replacing a marker with the same id.
    static func record(_ deploy: DeployMarker, on connection: TableConnection) throws {
        try connection.database.writeTransaction {
            try connection.database.update(
                """
                INSERT INTO \(name) (\(columns.list())) VALUES (\(columns.placeholders()))
                ON CONFLICT (\(keyColumns.list())) DO UPDATE SET \(valueColumns.fromExcluded)
                """, row(of: deploy))
        }
    }

    /// The markers that finished in `from..<to`, ordered by `finishedAt`, then id; rows that do not decode are
    /// skipped and reported.
    static func markers(from: Timestamp, to: Timestamp, on connection: TableConnection) throws -> [DeployMarker] {
        var markers: [DeployMarker] = []
        var skipped = SkippedRows(name)
        // The index narrows by whole seconds; the exact half-open range on the full timestamp is checked below.
        try connection.database.query(
            "SELECT \(columns.list()) FROM \(name) WHERE finished_s >= $1 AND finished_s <= $2",
            [.integer(from.secondsSinceEpoch), .integer(to.secondsSinceEpoch)]
        ) { row in
            try connection.readRow(&skipped) { markers.append(try decode(row)) }
        }
        connection.report(skipped)
        return markers.filter { from <= $0.finishedAt && $0.finishedAt < to }
            .sorted {
                $0.finishedAt != $1.finishedAt
                    ? $0.finishedAt < $1.finishedAt : $0.id.utf8.lexicographicallyPrecedes($1.id.utf8)
            }
    }
}
