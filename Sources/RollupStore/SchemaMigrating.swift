/// A store with a versioned schema: ``SQLRollupStore``, not the in-memory one.
public protocol SchemaMigrating: RollupStore {
    /// Runs the migrations the database lacks, in one transaction; a no-op when the schema is current.
    func migrate() throws
    /// The highest migration the database has recorded.
    func schemaVersion() throws -> Int64
}
