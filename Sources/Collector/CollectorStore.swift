public import FlowmeterModels
public import Rollups

/// Where a collector writes directly when it has a rollup store (`flowmeter serve --store …`): deploy markers and
/// manifests.
///
/// The CLI adapts a `RollupStore` to this, so the collector needs no database code. Its methods block on the
/// database: the collector calls them one at a time from its admin write queue's thread (`admin-store-writer`), never
/// from an HTTP worker (both are rare admin writes). Throwing answers 503.
public protocol CollectorStore: Sendable {
    /// Stores a deploy marker, replacing one with the same id.
    func recordDeploy(_ deploy: DeployMarker) throws
    /// Stores a capability manifest, replacing the same build's (`POST /v1/manifests`).
    func recordManifest(_ manifest: CapabilityManifest) throws
}

/// Takes the batch records of a collector without Kafka (`--kafka none`): the in-process sink, which builds the
/// rollups from them exactly as a sink reading the batches topic would.
public protocol BatchRecordHandoff: Sendable {
    /// Takes the records (the parts) of one accepted batch, in order; called from an HTTP worker, never blocks.
    func take(_ records: [[UInt8]])
}
