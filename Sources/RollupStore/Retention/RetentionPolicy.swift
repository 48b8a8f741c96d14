/// How long a store keeps its rows, and how much one prune deletes at a time.
///
/// Minute rows older than `keepMinutes` are deleted (their hour rows stay), hour rows older than `keepHours`; both
/// cut at a whole hour, so an hour is either all minutes or one hour row. Applied message ids keep their own
/// retention (``RollupStoreOptions/appliedIDRetentionSeconds``).
public struct RetentionPolicy: Sendable, Hashable {
    /// Seconds minute rows are kept; default 14 days.
    public var keepMinutes: Int64 = 14 * 86_400
    /// Seconds hour rows are kept; default 400 days. At least `keepMinutes`.
    public var keepHours: Int64 = 400 * 86_400
    /// The most rows one delete removes, each in a transaction of its own so that the sink's writes go on between
    /// them; default 5,000.
    public var batchRows = 5_000
    /// The most free pages one reclaim step returns to the file system (SQLite); default 2,000 (8 MB of 4 KB pages).
    public var reclaimPages = 2_000

    /// The defaults.
    public init() {}

    /// Time between prunes of a long-running sink (`flowmeter sink`, `flowmeter serve --store`); 1 h.
    public static let defaultPruneInterval: Duration = .seconds(3600)

    /// Why the policy cannot be used, or nil when it can.
    public var problem: String? {
        if keepMinutes <= 0 || keepHours <= 0 { return "retention must be positive" }
        if keepHours < keepMinutes { return "hour rows must be kept at least as long as minute rows" }
        if batchRows <= 0 { return "the batch size must be positive" }
        return nil
    }
}
