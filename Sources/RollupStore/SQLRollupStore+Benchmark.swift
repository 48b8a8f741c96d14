package import Rollups

/// Rollups to write as new rows, bypassing the merge: the seam the store benchmark (`RollupStoreBenchmarks`) fills a
/// database through.
///
/// The caller computes the hour rows (windows set to the hour start) and the earliest rollup per series for
/// `type_first_seen`; every window must be one that holds no row yet.
package struct NewRollupRows: Sendable {
    /// Rows for `series_minutes`.
    package var seriesMinutes: [SeriesRollup] = []
    /// Rows for `series_hours`, each window the start of its hour.
    package var seriesHours: [SeriesRollup] = []
    /// Rollups whose `firstSeen` is recorded per type (the earlier of it and any recorded wins).
    package var firstSeen: [SeriesRollup] = []
    /// Rows for `version_minutes`.
    package var versionMinutes: [VersionRollup] = []
    /// Rows for `version_hours`, each window the start of its hour.
    package var versionHours: [VersionRollup] = []

    /// No rows.
    package init() {}
}

extension SQLRollupStore {
    /// Writes `rows` in one transaction through the databases' bulk paths (a prepared insert in SQLite, COPY in
    /// PostgreSQL), without merging and without recording applied ids; for filling a benchmark database fast.
    package func insertNewRows(_ rows: NewRollupRows) throws { try core.insertNew(rows) }

    /// Refreshes the planner's statistics, as after a bulk load.
    package func analyze() throws { try core.analyze() }
}
