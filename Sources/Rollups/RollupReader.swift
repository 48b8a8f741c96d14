public import FlowmeterModels

/// What the detector and the CLI read from a rollup store, and the alert state the detector keeps there.
///
/// Declared here so the detector depends on no store; `RollupStore` refines it with `apply` and `recordDeploy`.
/// Ranges are half-open (`from..<to`) on window start (series and version rollups, buckets) or on `finishedAt`
/// (deploys). Results come in a fixed order (stated per method, strings by UTF-8 bytes) so that every store
/// returns exactly the same list; ``InMemoryRollupStore`` is the reference the stores are tested against.
/// Methods block (a store may do I/O): call them off the cooperative pool for long reads.
public protocol RollupReader: Sendable {
    /// Series rollups merged per series per minute, ordered by window, then series.
    func seriesRollups(_ query: SeriesQuery) throws -> [SeriesRollup]

    /// Events per series per bucket of `bucketSeconds` (aligned to multiples of it since the epoch), ordered by
    /// bucket start, then series; buckets without events are absent.
    func seriesBuckets(_ query: SeriesQuery, bucketSeconds: Int64) throws -> [SeriesBucket]

    /// Version rollups merged per app build per minute, ordered by window, then key.
    func versionRollups(from: Timestamp, to: Timestamp, appID: String?) throws -> [VersionRollup]

    /// Traffic per app build per bucket of `bucketSeconds`, ordered by bucket start, then key.
    func versionBuckets(from: Timestamp, to: Timestamp, appID: String?, bucketSeconds: Int64) throws
        -> [VersionBucket]

    /// The earliest `firstSeen` per (appID, widgetType) of `kind` in `buildConfiguration` builds over all history,
    /// ordered by appID, then widgetType.
    func firstSeen(appID: String?, kind: DiagnosticKind, buildConfiguration: BuildConfiguration) throws
        -> [TypeFirstSeen]

    /// Deploy markers that finished in `from..<to`, ordered by `finishedAt`, then id.
    func deploys(from: Timestamp, to: Timestamp) throws -> [DeployMarker]

    /// Stores alert states, replacing any with the same fingerprint.
    func saveAlertState(_ alerts: [AlertState]) throws

    /// The alerts without `resolvedAt`, ordered by fingerprint.
    func openAlerts() throws -> [AlertState]

    /// The capability manifests of `appID` (nil: every app), one per build, in ``CapabilityManifest/storeOrder(_:_:)``.
    func manifests(appID: String?) throws -> [CapabilityManifest]
    /// The newest watermark of every collector on every partition, and what retention removed: how fresh the store
    /// is (judge it with ``FreshnessAssessment``).
    func freshness() throws -> StoreFreshness
}
