public import FlowmeterModels

/// A store that can delete what its retention no longer keeps and say how big it is: ``SQLRollupStore``.
public protocol RollupStoreMaintenance: RollupStore {
    /// Deletes minute and hour rows older than `policy` keeps (and applied ids older than their own retention), in
    /// batches of `policy.batchRows`, each in a transaction of its own; then returns free pages to the file system
    /// where the database does that incrementally.
    ///
    /// Reads of minutes before the new horizon are answered from the hour rows from the moment it starts. Blocks;
    /// between batches it asks `shouldContinue` and stops (``PruneReport/isComplete`` false) when told to.
    func prune(
        _ policy: RetentionPolicy, now: Timestamp, shouldContinue: @Sendable () -> Bool
    ) throws -> PruneReport

    /// Rewrites the database so that later prunes can return free pages to the file system (SQLite files made
    /// before incremental vacuum); false when there was nothing to do. Needs the database to itself meanwhile.
    func enableIncrementalReclaim() throws -> Bool

    /// Rows, bytes and windows per table.
    func stats() throws -> StoreStats
}
