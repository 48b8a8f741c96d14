import Collector
import FlowmeterModels
import RollupStore
import Rollups
import Sink

/// Lets the collector write deploy markers and manifests into a ``RollupStore``.
struct StoreWriter: CollectorStore {
    let store: any RollupStore

    func recordDeploy(_ deploy: DeployMarker) throws { try store.recordDeploy(deploy) }
    func recordManifest(_ manifest: CapabilityManifest) throws { try store.recordManifest(manifest) }
}

/// Hands a collector's batch records to the in-process sink (`--kafka none`).
struct InProcessHandoff: BatchRecordHandoff {
    let sink: InProcessSink

    func take(_ records: [[UInt8]]) { sink.append(records) }
}
