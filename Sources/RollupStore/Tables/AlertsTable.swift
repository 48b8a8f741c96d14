import Foundation
import Rollups

/// `alerts`: the detector's alert states by fingerprint, as JSON, with whether each is open for the read of open
/// ones.
enum AlertsTable {
    static let name = "alerts"
    static let keyColumns: SQLColumns = ["fingerprint"]
    static let valueColumns: SQLColumns = ["is_open", "state"]
    static var columns: SQLColumns { keyColumns + valueColumns }

    /// The row of `alert`, in ``columns`` order.
    static func row(of alert: AlertState, encoder: JSONEncoder) throws -> [SQLValue] {
        [.text(alert.fingerprint), .integer(alert.isOpen ? 1 : 0), .blob([UInt8](try encoder.encode(alert)))]
    }

    /// The alert state a row holds, read in ``columns`` order; throws `invalidData` when it does not decode.
    static func decode(_ row: any SQLRow, decoder: JSONDecoder) throws -> AlertState {
        do {
            return try decoder.decode(AlertState.self, from: Data(try row.blob(2)))
        } catch let error as RollupStoreError {
            throw error
        } catch {
            throw RollupStoreError(.invalidData, "Stored alert state does not decode: \(error)")
        }
    }

    /// Stores `alerts` in one transaction, replacing any with the same fingerprint.
    static func save(_ alerts: [AlertState], on connection: TableConnection) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        // A ratio against a zero baseline is infinite; JSON has no such number.
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "+Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        let rows = try alerts.map { try row(of: $0, encoder: encoder) }
        try connection.database.writeTransaction {
            for row in rows {
                try connection.database.update(
                    """
                    INSERT INTO \(name) (\(columns.list())) VALUES (\(columns.placeholders()))
                    ON CONFLICT (\(keyColumns.list())) DO UPDATE SET \(valueColumns.fromExcluded)
                    """, row)
            }
        }
    }

    /// The open alerts, ordered by fingerprint; rows that do not decode are skipped and reported.
    static func open(on connection: TableConnection) throws -> [AlertState] {
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: "+Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        var alerts: [AlertState] = []
        var skipped = SkippedRows(name)
        try connection.database.query("SELECT \(columns.list()) FROM \(name) WHERE is_open = 1", []) { row in
            try connection.readRow(&skipped) { alerts.append(try decode(row, decoder: decoder)) }
        }
        connection.report(skipped)
        return alerts.sorted { $0.fingerprint.utf8.lexicographicallyPrecedes($1.fingerprint.utf8) }
    }
}
