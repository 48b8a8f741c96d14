/// One message of `flowmeter.rollups.v1`: a collector's delta for one series (or app build) and minute since its
/// previous flush.
///
/// `id` is `<collector instance>/<flush sequence>/<index in flush>`, unique per message; a store applies each id at
/// most once, which is what makes a replayed or duplicated message harmless (the counts themselves are not
/// idempotent).
public struct PartialRollup: Sendable, Equatable {
    /// The message id, `<collector instance>/<flush sequence>/<index in flush>`.
    public var id: String
    /// The collector id (without the boot id) that produced it.
    public var collector: String
    /// The rollup it carries.
    public var rollup: Rollup

    /// What a partial rollup carries: the JSON `type` (`series` or `version`) with its `rollup` object.
    public enum Rollup: Sendable, Equatable {
        /// A series rollup (`"type": "series"`).
        case series(SeriesRollup)
        /// A version rollup (`"type": "version"`).
        case version(VersionRollup)

        /// The minute the rollup covers.
        public var window: MinuteWindow {
            switch self {
            case .series(let rollup): return rollup.window
            case .version(let rollup): return rollup.window
            }
        }
    }

    /// Creates a partial rollup.
    public init(id: String, collector: String, rollup: Rollup) {
        self.id = id
        self.collector = collector
        self.rollup = rollup
    }
}
