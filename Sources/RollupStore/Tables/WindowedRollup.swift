package import Rollups

/// A rollup a window table stores: keyed, windowed, and mergeable with another of the same key and window.
///
/// `package` so that the store benchmark merges its hour rows by the same laws.
package protocol WindowedRollup {
    associatedtype Key: Hashable
    /// The series or app build the rollup counts.
    var rollupKey: Key { get }
    /// The minute (or, merged into an hour row, the hour) the rollup covers.
    var window: MinuteWindow { get set }
    /// Adds `other`, of the same key and window, into this rollup.
    mutating func merge(_ other: Self)
    /// Adds `other`, of the same key and any window, into this rollup: a minute into its hour's row, no copy needed.
    mutating func merge(contentsOf other: Self)
}

extension SeriesRollup: WindowedRollup {
    package var rollupKey: RollupSeries { series }
}

extension VersionRollup: WindowedRollup {
    package var rollupKey: VersionKey { key }
}
