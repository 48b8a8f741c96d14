import Foundation
import RollupStore
import Rollups
import TestSupport
import Testing

/// The stores the shared suite runs against: the in-memory reference, SQLite in a temp file, and PostgreSQL in a
/// throwaway cluster.
enum StoreKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case inMemory, sqlite, postgres

    var testDescription: String { rawValue }

    var isSQL: Bool { self != .inMemory }
}

/// A store under test with whatever keeps it alive (temp directory) and a way to open it again.
final class StoreFixture: Sendable {
    let kind: StoreKind
    let store: any RollupStore
    let location: String
    let options: RollupStoreOptions
    private let directory: TemporaryDirectory?

    init(_ kind: StoreKind, options: RollupStoreOptions = RollupStoreOptions()) throws {
        self.kind = kind
        self.options = options
        switch kind {
        case .inMemory:
            directory = nil
            location = ""
            store = InMemoryRollupStore()
        case .sqlite:
            let directory = try TemporaryDirectory(prefix: "rollupstore")
            self.directory = directory
            location = "sqlite:" + directory.file("rollups.db")
            store = try openRollupStore(url: location, options: options)
        case .postgres:
            directory = nil
            location = try PostgresServer.shared().makeDatabase(prefix: "rollups")
            store = try openRollupStore(url: location, options: options)
        }
    }

    /// Opens the same database again (as a restarted process would).
    func reopen() throws -> any RollupStore {
        try openRollupStore(url: location, options: options)
    }
}
