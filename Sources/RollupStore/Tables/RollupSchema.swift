/// The numbered schema migrations, written once for both databases.
///
/// Each migration runs in one transaction with its row in `schema_version`, so a crash leaves either none or all of
/// it; re-running skips what is recorded. Never edit a released migration: add the next number.
enum RollupSchema {
    struct Migration: Sendable {
        let version: Int64
        let statements: @Sendable (any SQLDatabase) -> [String]
    }

    static let migrations: [Migration] = [
        Migration(version: 1) { database in
            let blob = database.blobType
            let id = database.autoIDColumn
            return [
                """
                CREATE TABLE series (
                    id \(id), app_id TEXT NOT NULL, platform TEXT NOT NULL, app_version TEXT NOT NULL,
                    build_configuration TEXT NOT NULL, kind TEXT NOT NULL, widget_type TEXT NOT NULL,
                    UNIQUE (app_id, build_configuration, kind, widget_type, platform, app_version))
                """,
                seriesWindowTable("series_minutes", blob: blob),
                seriesWindowTable("series_hours", blob: blob),
                // Bucket queries read only these three columns: the index answers them without touching the wide rows.
                "CREATE INDEX series_minutes_events ON series_minutes (series_id, window_start, events)",
                "CREATE INDEX series_hours_events ON series_hours (series_id, window_start, events)",
                """
                CREATE TABLE versions (
                    id \(id), app_id TEXT NOT NULL, platform TEXT NOT NULL, app_version TEXT NOT NULL,
                    build_configuration TEXT NOT NULL, UNIQUE (app_id, platform, app_version, build_configuration))
                """,
                versionWindowTable("version_minutes", blob: blob),
                versionWindowTable("version_hours", blob: blob),
                """
                CREATE TABLE type_first_seen (
                    app_id TEXT NOT NULL, build_configuration TEXT NOT NULL, kind TEXT NOT NULL,
                    widget_type TEXT NOT NULL, first_seen_s BIGINT NOT NULL, first_seen_ns BIGINT NOT NULL,
                    PRIMARY KEY (kind, build_configuration, app_id, widget_type))
                """,
                "CREATE TABLE applied_messages (id TEXT PRIMARY KEY, applied_at BIGINT NOT NULL)",
                "CREATE INDEX applied_messages_applied_at ON applied_messages (applied_at)",
                """
                CREATE TABLE deploys (
                    id TEXT PRIMARY KEY, finished_s BIGINT NOT NULL, finished_ns BIGINT NOT NULL, marker \(blob) NOT NULL)
                """,
                "CREATE INDEX deploys_finished ON deploys (finished_s, finished_ns)",
                "CREATE TABLE alerts (fingerprint TEXT PRIMARY KEY, is_open BIGINT NOT NULL, state \(blob) NOT NULL)",
                "CREATE INDEX alerts_open ON alerts (is_open)",
            ]
        },
        // The events apps' SDKs report dropping on the device (batches' clientReport), per version and window.
        Migration(version: 2) { _ in
            [
                "ALTER TABLE version_minutes ADD COLUMN client_discarded BIGINT NOT NULL DEFAULT 0",
                "ALTER TABLE version_hours ADD COLUMN client_discarded BIGINT NOT NULL DEFAULT 0",
            ]
        },
        // Freshness and retention: collectors' watermarks per partition, what retention removed, and indexes that
        // let retention find old windows without scanning every row.
        Migration(version: 3) { _ in
            [
                """
                CREATE TABLE collector_watermarks (
                    collector TEXT NOT NULL, partition_number BIGINT NOT NULL, partitions BIGINT NOT NULL,
                    complete_up_to_s BIGINT NOT NULL, complete_up_to_ns BIGINT NOT NULL, is_stopped BIGINT NOT NULL,
                    recorded_at BIGINT NOT NULL, PRIMARY KEY (collector, partition_number))
                """,
                "CREATE TABLE retention_horizons (row_kind TEXT PRIMARY KEY, before_s BIGINT NOT NULL)",
                "CREATE INDEX series_minutes_window ON series_minutes (window_start)",
                "CREATE INDEX series_hours_window ON series_hours (window_start)",
                "CREATE INDEX version_minutes_window ON version_minutes (window_start)",
                "CREATE INDEX version_hours_window ON version_hours (window_start)",
            ]
        },
        // Capability manifests (docs/api.md#capability-manifests): one row per build, the JSON as uploaded (keys sorted).
        Migration(version: 4) { database in
            [
                """
                CREATE TABLE manifests (
                    app_id TEXT NOT NULL, platform TEXT NOT NULL, app_version TEXT NOT NULL, build TEXT NOT NULL,
                    uploaded_s BIGINT NOT NULL, uploaded_ns BIGINT NOT NULL, manifest \(database.blobType) NOT NULL,
                    PRIMARY KEY (app_id, platform, app_version, build))
                """
            ]
        },
        // Rollups built from the log (flowmeter.batches.v1), exactly once: each partition's next offset and
        // freshness, and the batches counted within the dedupe horizon, written in the transaction of the rollups.
        // Collectors' watermarks came with the partial rollups that are gone: the ones held say nothing any more.
        Migration(version: 5) { _ in
            [
                """
                CREATE TABLE sink_partitions (
                    topic TEXT NOT NULL, partition_number BIGINT NOT NULL, partitions BIGINT NOT NULL,
                    next_offset BIGINT NOT NULL, complete_up_to_s BIGINT, complete_up_to_ns BIGINT,
                    updated_at BIGINT NOT NULL, PRIMARY KEY (topic, partition_number))
                """,
                """
                CREATE TABLE counted_batches (
                    topic TEXT NOT NULL, partition_number BIGINT NOT NULL, batch_key TEXT NOT NULL,
                    received_s BIGINT NOT NULL, PRIMARY KEY (topic, partition_number, batch_key))
                """,
                "CREATE INDEX counted_batches_received ON counted_batches (topic, partition_number, received_s)",
                "DELETE FROM collector_watermarks",
            ]
        },
        // The backend release dimension of version rollups: batches and decodes per release (docs/design/rollups.md,
        // "Traffic per backend release"). Rows written before it hold NULL, read as no release.
        Migration(version: 6) { database in
            [
                "ALTER TABLE version_minutes ADD COLUMN releases \(database.blobType)",
                "ALTER TABLE version_hours ADD COLUMN releases \(database.blobType)",
            ]
        },
        // The builds (`client.build`) that sent each version rollup's batches, with their batches and last minute
        // (docs/design/rollups.md, "Builds"). Rows written before it hold NULL, read as no build.
        Migration(version: 7) { database in
            [
                "ALTER TABLE version_minutes ADD COLUMN builds \(database.blobType)",
                "ALTER TABLE version_hours ADD COLUMN builds \(database.blobType)",
            ]
        },
    ]

    static var latestVersion: Int64 { migrations.map(\.version).max() ?? 0 }

    /// Brings the database to the latest schema; safe to run again and from several processes at once.
    static func migrate(_ database: any SQLDatabase, now: Int64) throws {
        try database.writeTransaction {
            try database.lockForMigration()
            try database.executeScript(
                "CREATE TABLE IF NOT EXISTS schema_version (version BIGINT PRIMARY KEY, applied_at BIGINT NOT NULL)")
            var current: Int64 = 0
            try database.query("SELECT CAST(COALESCE(MAX(version), 0) AS BIGINT) FROM schema_version", []) { row in
                current = try row.int64(0)
            }
            guard current <= latestVersion else {
                throw RollupStoreError(
                    .schema, "The database has schema version \(current); this build knows up to \(latestVersion)")
            }
            for migration in migrations where migration.version > current {
                for statement in migration.statements(database) {
                    try database.executeScript(statement)
                }
                try database.update(
                    "INSERT INTO schema_version (version, applied_at) VALUES ($1, $2)",
                    [.integer(migration.version), .integer(now)])
            }
        }
    }

    /// The schema version recorded in the database (0 before the first migration).
    static func currentVersion(_ database: any SQLDatabase) throws -> Int64 {
        var current: Int64 = 0
        try database.query("SELECT CAST(COALESCE(MAX(version), 0) AS BIGINT) FROM schema_version", []) { row in
            current = try row.int64(0)
        }
        return current
    }

    private static func seriesWindowTable(_ name: String, blob: String) -> String {
        """
        CREATE TABLE \(name) (
            series_id BIGINT NOT NULL REFERENCES series (id), window_start BIGINT NOT NULL, events BIGINT NOT NULL,
            installs \(blob) NOT NULL, first_seen_s BIGINT NOT NULL, first_seen_ns BIGINT NOT NULL,
            last_seen_s BIGINT NOT NULL, last_seen_ns BIGINT NOT NULL, releases \(blob) NOT NULL,
            samples \(blob) NOT NULL, PRIMARY KEY (series_id, window_start))
        """
    }

    private static func versionWindowTable(_ name: String, blob: String) -> String {
        """
        CREATE TABLE \(name) (
            version_id BIGINT NOT NULL REFERENCES versions (id), window_start BIGINT NOT NULL,
            batches BIGINT NOT NULL, clean_batches BIGINT NOT NULL, decodes BIGINT NOT NULL,
            installs \(blob) NOT NULL, registered_types \(blob) NOT NULL, max_schema_version BIGINT,
            PRIMARY KEY (version_id, window_start))
        """
    }
}
