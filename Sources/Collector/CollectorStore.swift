public import FlowmeterModels
public import Rollups

/// Where a collector writes directly when it has a rollup store (`flowmeter serve --store …`).
///
/// The CLI adapts a `RollupStore` to this, so the collector needs no database code. Its methods block on the
/// database: the collector calls them from its rollup flush thread and, for deploy markers and manifests, from an
/// HTTP worker (both are rare admin writes). Throwing keeps the data for a retry (rollups) or answers 503 (deploys, manifests).
public protocol CollectorStore: Sendable {
    /// Merges partial rollups idempotently by message id, in one transaction.
    func apply(_ partials: [PartialRollup]) throws -> RollupApplyResult
    /// Stores a deploy marker, replacing one with the same id.
    func recordDeploy(_ deploy: DeployMarker) throws
    /// Stores a capability manifest, replacing the same build's (`POST /v1/manifests`, from an HTTP worker).
    func recordManifest(_ manifest: CapabilityManifest) throws
    /// Records the collector's watermark (one partition, the store's own) after the rollups it vouches for.
    func recordWatermarks(_ watermarks: [CollectorWatermark]) throws
}
