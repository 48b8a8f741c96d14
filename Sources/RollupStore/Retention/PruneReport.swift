public import FlowmeterModels

/// What one prune did.
public struct PruneReport: Sendable, Hashable {
    /// Minute rows (series and versions) deleted.
    public var minuteRows = 0
    /// Hour rows deleted.
    public var hourRows = 0
    /// Applied message ids forgotten.
    public var appliedIDs = 0
    /// Delete statements run (each in its own transaction).
    public var batches = 0
    /// Free pages returned to the file system (SQLite with incremental vacuum); nil where the database reclaims
    /// space itself or cannot.
    public var reclaimedPages: Int?
    /// Whether every old row is gone; false when the prune stopped at its bound and the next one continues.
    public var isComplete = true
    /// Minute rows before this are gone.
    public var minutesBefore: Timestamp
    /// Hour rows before this are gone.
    public var hoursBefore: Timestamp

    /// A report of nothing deleted yet, for these horizons.
    public init(minutesBefore: Timestamp, hoursBefore: Timestamp) {
        self.minutesBefore = minutesBefore
        self.hoursBefore = hoursBefore
    }

    /// Rows of every kind deleted.
    public var deletedRows: Int { minuteRows + hourRows + appliedIDs }
}
