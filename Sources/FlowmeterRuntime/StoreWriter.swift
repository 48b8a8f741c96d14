import Collector
import FlowmeterModels
import RollupStore
import Rollups

/// Lets the collector write rollups (in `--kafka none` mode), deploy markers and manifests into a ``RollupStore``.
struct StoreWriter: CollectorStore {
    let store: any RollupStore

    func apply(_ partials: [PartialRollup]) throws -> RollupApplyResult { try store.apply(partials) }
    func recordDeploy(_ deploy: DeployMarker) throws { try store.recordDeploy(deploy) }
    func recordManifest(_ manifest: CapabilityManifest) throws { try store.recordManifest(manifest) }
    func recordWatermarks(_ watermarks: [CollectorWatermark]) throws { try store.recordWatermarks(watermarks) }
}
