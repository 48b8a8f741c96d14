import Collector
import RollupStore
import Rollups

/// Lets the collector write rollups (in `--kafka none` mode) and deploy markers into a ``RollupStore``.
struct StoreWriter: CollectorStore {
    let store: any RollupStore

    func apply(_ partials: [PartialRollup]) throws -> RollupApplyResult { try store.apply(partials) }
    func recordDeploy(_ deploy: DeployMarker) throws { try store.recordDeploy(deploy) }
    func recordWatermarks(_ watermarks: [CollectorWatermark]) throws { try store.recordWatermarks(watermarks) }
}
