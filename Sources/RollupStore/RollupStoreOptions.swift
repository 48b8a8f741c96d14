public import FlowmeterModels
import Foundation

/// Settings shared by the SQL rollup stores, with defaults for production.
public struct RollupStoreOptions: Sendable {
    /// How long applied message ids are remembered (and replays rejected); 7 days by default, longer than any
    /// Kafka retention a replay could come from.
    public var appliedIDRetentionSeconds: Int64 = 7 * 86_400
    /// Read connections kept open for concurrent readers; 4 by default.
    public var readerConnections: Int = 4
    /// The clock used to stamp applied ids; the system clock by default (tests move it to check pruning).
    public var clock: @Sendable () -> Timestamp = { Timestamp(Date()) }

    /// Told once per read that skipped rows it could not decode, and once per merge that replaced one (see
    /// ``UnreadableRows``); ignores them by default. Called on the reading thread, inside the store's lock: keep it
    /// short (count, log).
    public var onUnreadableRows: @Sendable (UnreadableRows) -> Void = { _ in }

    /// How long a PostgreSQL store waits for its server (connect, keepalives, statement and response timeouts);
    /// the defaults of ``PostgresTimeouts``. A store URL's own settings win.
    public var postgresTimeouts = PostgresTimeouts()

    /// The page cache of a SQLite store's writer connection in KiB (`PRAGMA cache_size`); nil keeps SQLite's own
    /// (2 MiB). 64 MiB made no measurable difference to the sink's step in `flowmeter-bench sink --sqlite-cache-kib`
    /// (docs/performance.md, "2026-12-06, issue 35: the sink's step on recent traffic, …"), so the default stays.
    package var sqliteWriterCacheKiB: Int?

    /// After how many runs of the same SQL text a PostgreSQL connection prepares it (a named statement, parsed and
    /// planned once per connection); nil never prepares (every statement parsed on every run, as before). For
    /// benchmarks that compare the two.
    package var postgresPreparesAfter: Int? = 2

    /// Whether a new SQLite file is made with `auto_vacuum=INCREMENTAL` (so prunes return free pages); true except
    /// in tests that need a file as older builds made it.
    package var makesIncrementalSQLite = true

    /// The defaults.
    public init() {}
}
