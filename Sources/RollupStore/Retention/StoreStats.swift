public import FlowmeterModels
public import Rollups

/// How big a store is and what it spans, for `flowmeter store stats`.
public struct StoreStats: Sendable, Hashable {
    /// One table.
    public struct Table: Sendable, Hashable {
        /// The table's name.
        public var name: String
        /// Its rows.
        public var rows: Int64
        /// The bytes it and its indexes take, where the database can say.
        public var bytes: Int64?
        /// The oldest and newest window start (minute and hour tables only).
        public var oldestWindow: Timestamp?
        /// The newest window start (minute and hour tables only).
        public var newestWindow: Timestamp?
    }

    /// Every table of the schema, in schema order.
    public var tables: [Table]
    /// The bytes the database takes.
    public var totalBytes: Int64
    /// Bytes held but unused (SQLite's free pages); nil where the database does not say.
    public var freeBytes: Int64?
    /// Whether freed pages go back to the file system incrementally (SQLite `auto_vacuum=INCREMENTAL`); nil where
    /// the database manages space itself.
    public var reclaimsIncrementally: Bool?
    /// What retention removed.
    public var retention: RetentionHorizon
    /// The schema version.
    public var schemaVersion: Int64
}
