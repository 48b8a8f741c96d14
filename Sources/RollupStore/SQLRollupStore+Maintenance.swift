public import FlowmeterModels

extension SQLRollupStore: RollupStoreMaintenance {
    /// Deletes rows retention no longer keeps, in bounded batches, then reclaims free pages; see
    /// RollupStoreMaintenance/prune(_:now:shouldContinue:).
    public func prune(
        _ policy: RetentionPolicy, now: Timestamp, shouldContinue: @Sendable () -> Bool = { true }
    ) throws -> PruneReport {
        try RetentionPruner.prune(
            policy, now: now.secondsSinceEpoch,
            appliedIDsBefore: now.secondsSinceEpoch - core.options.appliedIDRetentionSeconds, core: core,
            shouldContinue: shouldContinue)
    }

    /// Rewrites an SQLite file made without incremental vacuum so that prunes reclaim space; false for PostgreSQL
    /// and for files that already do.
    public func enableIncrementalReclaim() throws -> Bool {
        try core.write { try $0.database.enableIncrementalReclaim() }
    }

    /// Rows, bytes and windows per table.
    public func stats() throws -> StoreStats {
        try core.read { try StoreStatsReader.stats(on: $0) }
    }
}
