import RollupStore
import TestSupport
import Testing

/// The stores the sink's end-to-end tests run against: SQLite in a temp file and PostgreSQL in the throwaway cluster
/// that the store tests share.
enum SinkStoreKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite, postgres

    var testDescription: String { rawValue }

    /// Opens a new, empty store of this kind; SQLite's file goes into `directory`.
    func makeStore(in directory: TemporaryDirectory) throws -> any RollupStore {
        switch self {
        case .sqlite: try openRollupStore(url: directory.file("rollups.sqlite"))
        case .postgres: try openRollupStore(url: try PostgresServer.shared().makeDatabase(prefix: "sink"))
        }
    }
}
