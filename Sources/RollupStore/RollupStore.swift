public import FlowmeterModels
public import Rollups

/// A durable home for rollups: applies partial rollups idempotently and answers the detector's reads.
///
/// Implementations: ``SQLRollupStore`` (an embedded SQLite file, the default, or PostgreSQL); open it from a URL with
/// ``openRollupStore(url:options:)``. Methods block on database I/O: call them from a dedicated thread or
/// queue, not the cooperative pool. Errors are ``RollupStoreError``; retry the ones marked `isRetriable`.
public protocol RollupStore: RollupReader, SinkStore {
    /// Merges partial rollups in one transaction; ids applied before (or earlier in the list) are skipped.
    ///
    /// The ids are recorded in the same transaction as the merge, so a replayed message never counts twice; ids
    /// older than the retention (7 days by default) are pruned. On error nothing of the list is applied.
    func apply(_ partials: [PartialRollup]) throws -> RollupApplyResult
    /// Records collectors' watermarks, each kept unless the store holds a newer one of the same collector and
    /// partition (``CollectorWatermark/supersedes(_:)``); in one transaction.
    ///
    /// Call it only after the partial rollups read before the watermarks (on their partitions) were applied.
    func recordWatermarks(_ watermarks: [CollectorWatermark]) throws
}

/// What a sink writes through (``RollupStore``'s part the sink uses): its partition steps, and the deploys and
/// manifests it merges; a test double of the sink's store implements these four only.
public protocol SinkStore: Sendable {
    /// Stores a deploy marker, replacing one with the same id.
    func recordDeploy(_ deploy: DeployMarker) throws
    /// Stores a capability manifest, replacing the one of the same app id, app version, platform and build unless
    /// that one was uploaded later (``CapabilityManifest/uploadedAt``).
    func recordManifest(_ manifest: CapabilityManifest) throws
    /// Applies sink steps in one transaction, all of them or none: merges their rollups, remembers their counted
    /// batches (forgetting those before each step's ``PartitionStep/forgetBefore``) and stores each partition's next
    /// offset and freshness, but only when every partition's stored offset is still its step's
    /// ``PartitionStep/startOffset``. The steps are of distinct partitions; a sink commits the partitions of one
    /// poll together, so a series-minute they share is written once.
    ///
    /// Throws ``PartitionFenced`` (and changes nothing) when a stored offset moved: another sink owns that
    /// partition. On any error nothing of the steps is applied.
    func commit(_ steps: [PartitionStep]) throws
    /// The partition's stored next offset and the batches counted within the dedupe horizon.
    func position(topic: String, partition: Int) throws -> PartitionPosition
}

extension SinkStore {
    /// Applies one partition's step in one transaction (``commit(_:)-([PartitionStep])``).
    public func commit(_ step: PartitionStep) throws { try commit([step]) }
}

extension InMemoryRollupStore: RollupStore {}
