public import FlowmeterModels
public import Rollups

/// The embedded rollup store: one SQLite file in WAL mode.
///
/// `synchronous=NORMAL`: commits survive a process crash, but the newest ones can roll back on power loss
/// (RELIABILITY.md S5), which the sink tolerates because Kafka offsets are committed only after the store and a
/// rolled-back apply is replayed. Busy timeout 5000 ms, foreign keys on. One writer connection; readers use their own
/// connections and read a snapshot without blocking the writer.
public final class SQLiteRollupStore: RollupStore {
    let core: SQLRollupStoreCore

    /// Opens (creating and migrating if needed) the database file at `path`.
    public init(path: String, options: RollupStoreOptions = RollupStoreOptions()) throws {
        let writer = try SQLiteConnection(path: path)
        try writer.executeScript("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON")
        core = try SQLRollupStoreCore(writer: writer, options: options) {
            let reader = try SQLiteConnection(path: path)
            try reader.executeScript("PRAGMA foreign_keys=ON; PRAGMA query_only=ON")
            return reader
        }
    }

    /// Merges partial rollups in one transaction, skipping ids applied before; see RollupStore/apply(_:).
    public func apply(_ partials: [PartialRollup]) throws -> RollupApplyResult { try core.apply(partials) }

    /// Stores a deploy marker, replacing one with the same id.
    public func recordDeploy(_ deploy: DeployMarker) throws { try core.write { try $0.recordDeploy(deploy) } }

    /// Deploy markers that finished in `from..<to`, ordered by `finishedAt`, then id.
    public func deploys(from: Timestamp, to: Timestamp) throws -> [DeployMarker] {
        try core.read { try $0.deploys(from: from, to: to) }
    }

    /// Series rollups merged per series per minute, ordered by window, then series.
    public func seriesRollups(_ query: SeriesQuery) throws -> [SeriesRollup] {
        try core.read { try $0.seriesRollups(query) }
    }

    /// Events per series per bucket; buckets of whole hours read the hour table.
    public func seriesBuckets(_ query: SeriesQuery, bucketSeconds: Int64) throws -> [SeriesBucket] {
        try core.read { try $0.seriesBuckets(query, bucketSeconds: bucketSeconds) }
    }

    /// Version rollups merged per app build per minute, ordered by window, then key.
    public func versionRollups(from: Timestamp, to: Timestamp, appID: String?) throws -> [VersionRollup] {
        try core.read { try $0.versionRollups(from: from, to: to, appID: appID) }
    }

    /// Traffic per app build per bucket; buckets of whole hours read the hour table.
    public func versionBuckets(
        from: Timestamp, to: Timestamp, appID: String?, bucketSeconds: Int64
    ) throws -> [VersionBucket] {
        try core.read { try $0.versionBuckets(from: from, to: to, appID: appID, bucketSeconds: bucketSeconds) }
    }

    /// The earliest `firstSeen` per (appID, widgetType), kept up to date on every apply.
    public func firstSeen(
        appID: String?, kind: DiagnosticKind, buildConfiguration: BuildConfiguration
    ) throws -> [TypeFirstSeen] {
        try core.read { try $0.firstSeen(appID: appID, kind: kind, buildConfiguration: buildConfiguration) }
    }

    /// Stores alert states in one transaction, replacing any with the same fingerprint.
    public func saveAlertState(_ alerts: [AlertState]) throws { try core.write { try $0.saveAlertState(alerts) } }

    /// The alerts without `resolvedAt`, ordered by fingerprint.
    public func openAlerts() throws -> [AlertState] { try core.read { try $0.openAlerts() } }

    /// Runs the migrations again (a no-op when the schema is current); for tests and tools.
    public func migrate() throws { try core.migrateAgain() }

    /// The schema version the database holds.
    public func schemaVersion() throws -> Int64 { try core.schemaVersion() }
}
