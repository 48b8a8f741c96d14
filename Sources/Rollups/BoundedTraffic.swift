/// What a version rollup keeps per name beside its counts (``VersionReleaseTraffic`` per backend release,
/// ``VersionBuildTraffic`` per build): values that add, at most a bound of names, each type choosing which to keep.
///
/// One merge for both maps, so ``VersionRollup/merge(_:)`` and the aggregator's counting stay exactly associative
/// in the same way: add everything, then cut once to the bound.
public protocol BoundedTraffic: Sendable, Equatable {
    /// No traffic.
    init()
    /// Adds `other` into this value.
    mutating func add(_ other: Self)
    /// `entries` cut to the names this type keeps; unchanged when within the bound.
    static func bounded(_ entries: [String: Self]) -> [String: Self]
}

extension Dictionary where Key == String, Value: BoundedTraffic {
    /// Adds `value` under `name`, without cutting to the bound (``keepWithinBound()`` does, once).
    mutating func accumulate(_ value: Value, under name: String) {
        self[name, default: Value()].add(value)
    }

    /// Cuts the map to the names its value type keeps.
    mutating func keepWithinBound() {
        self = Value.bounded(self)
    }

    /// Adds every entry of `other`, then cuts once to the bound.
    mutating func merge(bounded other: Self) {
        guard !other.isEmpty else { return }
        for (name, value) in other { accumulate(value, under: name) }
        keepWithinBound()
    }
}
