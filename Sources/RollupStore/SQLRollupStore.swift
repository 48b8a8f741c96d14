public import FlowmeterModels
public import Rollups

/// The rollup store on SQL: an embedded SQLite file (the default), or PostgreSQL for several sinks or a shared
/// detector.
///
/// Both databases run the same statements over the same schema, one table type each (`Tables/`); only the opening
/// differs, hence the two initializers. One writer connection applies under a lock; readers use pooled connections of
/// their own and read a snapshot without blocking the writer. Methods block on database I/O: call them from a
/// dedicated thread or queue. Errors are ``RollupStoreError``; retry the ones marked `isRetriable`.
public final class SQLRollupStore: RollupStore, SchemaMigrating {
    let core: SQLRollupStoreCore

    /// Opens (creating and migrating if needed) the SQLite database file at `sqlitePath`, in WAL mode.
    ///
    /// A new file is made with `auto_vacuum=INCREMENTAL`, so pruning returns free pages to the file system.
    /// `synchronous=NORMAL`: commits survive a process crash, but the newest ones can roll back on power loss
    /// (docs/reliability.md S5), which the sink tolerates because Kafka offsets are committed only after the store and a
    /// rolled-back apply is replayed. Busy timeout 5000 ms, foreign keys on.
    public init(sqlitePath path: String, options: RollupStoreOptions = RollupStoreOptions()) throws {
        let writer = try SQLiteConnection(path: path)
        // auto_vacuum takes effect only in a file without tables (a new store); an older file keeps its mode until
        // `enableIncrementalReclaim()` rewrites it.
        if options.makesIncrementalSQLite { try writer.executeScript("PRAGMA auto_vacuum=INCREMENTAL") }
        try writer.executeScript("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON")
        if let kibibytes = options.sqliteWriterCacheKiB {
            try writer.executeScript("PRAGMA cache_size=-\(max(1, kibibytes))")
        }
        core = try SQLRollupStoreCore(writer: writer, options: options) {
            let reader = try SQLiteConnection(path: path)
            try reader.executeScript("PRAGMA foreign_keys=ON; PRAGMA query_only=ON")
            return reader
        }
    }

    /// Connects to PostgreSQL at `postgresURL` (`postgres://user@host:port/database`, over libpq) and migrates the
    /// schema if needed.
    ///
    /// Every connection has the timeouts of `options.postgresTimeouts` unless the URL sets them (libpq parameters
    /// such as `connect_timeout`, `keepalives_idle`, `sslmode=verify-full&sslrootcert=…`, and server settings in
    /// `options`); docs/sink.md lists them.
    ///
    /// Concurrent sinks are safe: applied ids and rows are claimed with `INSERT … ON CONFLICT` and merged under
    /// `SELECT … FOR UPDATE`. A conflict between sinks surfaces as a retriable ``RollupStoreError``.
    public init(postgresURL url: String, options: RollupStoreOptions = RollupStoreOptions()) throws {
        let timeouts = options.postgresTimeouts
        let preparesAfter = options.postgresPreparesAfter
        let writer = try PostgresConnection(url: url, timeouts: timeouts, preparesAfter: preparesAfter)
        try writer.executeScript("SET client_min_messages = warning")
        core = try SQLRollupStoreCore(writer: writer, options: options) {
            try PostgresConnection(url: url, timeouts: timeouts, preparesAfter: preparesAfter)
        }
    }

    /// Merges partial rollups in one transaction, skipping ids applied before; see RollupStore/apply(_:).
    public func apply(_ partials: [PartialRollup]) throws -> RollupApplyResult { try core.apply(partials) }

    /// Stores a deploy marker, replacing one with the same id.
    public func recordDeploy(_ deploy: DeployMarker) throws {
        try core.write { try DeploysTable.record(deploy, on: $0) }
    }

    /// Stores a capability manifest, replacing the same build's unless that one was uploaded later.
    public func recordManifest(_ manifest: CapabilityManifest) throws {
        try core.write { try ManifestsTable.record(manifest, on: $0) }
    }

    /// The manifests of `appID` (nil: every app), in ``CapabilityManifest/storeOrder(_:_:)``.
    public func manifests(appID: String?) throws -> [CapabilityManifest] {
        try core.read { try ManifestsTable.manifests(appID: appID, on: $0) }
    }

    /// Records watermarks in one transaction, keeping the newest per collector and partition; see
    /// RollupStore/recordWatermarks(_:).
    public func recordWatermarks(_ watermarks: [CollectorWatermark]) throws {
        let now = core.options.clock().secondsSinceEpoch
        try core.write { try WatermarksTable.record(watermarks, now: now, on: $0) }
    }

    /// Applies sink steps in one transaction, each fenced by its partition's stored offset; see
    /// SinkStore/commit(_:).
    public func commit(_ steps: [PartitionStep]) throws { try core.commit(steps) }

    /// The partition's stored next offset and counted batches (read on the writer connection, so a sink that just
    /// committed reads its own step).
    public func position(topic: String, partition: Int) throws -> PartitionPosition {
        try core.write { try SinkPartitionsTable.position(topic: topic, partition: partition, on: $0) }
    }

    /// The freshness of every partition the sinks read (as watermarks named after the topic), any stored
    /// watermarks, and the retention horizons.
    public func freshness() throws -> StoreFreshness {
        try core.read {
            let watermarks = try WatermarksTable.all(on: $0) + SinkPartitionsTable.watermarks(on: $0)
            return StoreFreshness(
                watermarks: watermarks.sorted {
                    $0.collector != $1.collector
                        ? $0.collector.utf8.lexicographicallyPrecedes($1.collector.utf8)
                        : $0.partition < $1.partition
                },
                retention: try RetentionHorizonsTable.horizon(on: $0))
        }
    }

    /// Deploy markers that finished in `from..<to`, ordered by `finishedAt`, then id.
    public func deploys(from: Timestamp, to: Timestamp) throws -> [DeployMarker] {
        try core.read { try DeploysTable.markers(from: from, to: to, on: $0) }
    }

    /// Series rollups merged per series per minute, ordered by window, then series.
    public func seriesRollups(_ query: SeriesQuery) throws -> [SeriesRollup] {
        try core.read { try SeriesWindowTable.rollups(query, on: $0) }
    }

    /// Events per series per bucket; buckets of whole hours read the hour table.
    public func seriesBuckets(_ query: SeriesQuery, bucketSeconds: Int64) throws -> [SeriesBucket] {
        try core.read { try SeriesWindowTable.buckets(query, bucketSeconds: bucketSeconds, on: $0) }
    }

    /// Version rollups merged per app build per minute, ordered by window, then key.
    public func versionRollups(from: Timestamp, to: Timestamp, appID: String?) throws -> [VersionRollup] {
        try core.read { try VersionWindowTable.rollups(from: from, to: to, appID: appID, on: $0) }
    }

    /// Traffic per app build per bucket; buckets of whole hours read the hour table.
    public func versionBuckets(
        from: Timestamp, to: Timestamp, appID: String?, bucketSeconds: Int64
    ) throws -> [VersionBucket] {
        try core.read {
            try VersionWindowTable.buckets(from: from, to: to, appID: appID, bucketSeconds: bucketSeconds, on: $0)
        }
    }

    /// The earliest `firstSeen` per (appID, widgetType), kept up to date on every apply.
    public func firstSeen(
        appID: String?, kind: DiagnosticKind, buildConfiguration: BuildConfiguration
    ) throws -> [TypeFirstSeen] {
        try core.read {
            try TypeFirstSeenTable.records(appID: appID, kind: kind, buildConfiguration: buildConfiguration, on: $0)
        }
    }

    /// Stores alert states in one transaction, replacing any with the same fingerprint.
    public func saveAlertState(_ alerts: [AlertState]) throws {
        try core.write { try AlertsTable.save(alerts, on: $0) }
    }

    /// The alerts without `resolvedAt`, ordered by fingerprint.
    public func openAlerts() throws -> [AlertState] { try core.read { try AlertsTable.open(on: $0) } }

    /// Runs the migrations again (a no-op when the schema is current); for tests and tools.
    public func migrate() throws { try core.migrateAgain() }

    /// The schema version the database holds.
    public func schemaVersion() throws -> Int64 { try core.schemaVersion() }
}
