/// One app build's traffic in one minute (of receipt): batches, clean batches, decodes, installs, capabilities, the
/// events its SDK reported dropping on the device (`clientReport`), and the batches and decodes attributed to each
/// backend release its events carried (``releases``), and the builds (`client.build`) that sent the batches
/// (``builds``).
///
/// ``merge(_:)`` is associative and commutative exactly: counts add, installs and registered types union, the
/// schema version takes the maximum. `releases` keeps at most ``VersionReleaseTraffic/maxReleases``, exactly
/// associative as long as the merged rollups carry no more between them (as ``SeriesRollup/releases``); `builds`
/// likewise keeps the ``VersionBuildTraffic/maxBuilds`` newest.
public struct VersionRollup: Sendable, Equatable {
    /// The app build.
    public var key: VersionKey
    /// The minute the batches were received.
    public var window: MinuteWindow
    /// Batches received.
    public var batches: Int64
    /// Batches with no diagnostics at all: no accepted and no dropped event.
    public var cleanBatches: Int64
    /// The sum of the batches' `decodes` (absent counts as 0).
    public var decodes: Int64
    /// Distinct installs that sent a batch.
    public var installs: HyperLogLog
    /// The union of the batches' `capabilities.registeredTypes`.
    public var registeredTypes: Set<String>
    /// The highest `capabilities.maxSchemaVersion` sent, nil when no batch sent one.
    public var maxSchemaVersion: Int?
    /// Events the app's SDK dropped before sending (the batches' `clientReport` totals): on-device loss.
    public var clientDiscarded: Int64
    /// Batches and decodes per backend release (`service@version`), attributed through the batches' events
    /// (``VersionReleaseTraffic``); batches attributed to no release are not in it.
    public var releases: [String: VersionReleaseTraffic]
    /// Batches and the last minute seen per build (`client.build`) of the version; batches that named no build are
    /// not in it.
    public var builds: [String: VersionBuildTraffic]

    /// Creates a rollup.
    public init(
        key: VersionKey, window: MinuteWindow, batches: Int64 = 0, cleanBatches: Int64 = 0, decodes: Int64 = 0,
        installs: HyperLogLog = HyperLogLog(), registeredTypes: Set<String> = [], maxSchemaVersion: Int? = nil,
        clientDiscarded: Int64 = 0, releases: [String: VersionReleaseTraffic] = [:],
        builds: [String: VersionBuildTraffic] = [:]
    ) {
        self.key = key
        self.window = window
        self.batches = batches
        self.cleanBatches = cleanBatches
        self.decodes = decodes
        self.installs = installs
        self.registeredTypes = registeredTypes
        self.maxSchemaVersion = maxSchemaVersion
        self.clientDiscarded = clientDiscarded
        self.releases = VersionReleaseTraffic.bounded(releases)
        self.builds = VersionBuildTraffic.bounded(builds)
    }

    /// Adds `other` into this rollup; both must have the same key and window.
    ///
    /// Counts saturate at `Int64.max` rather than trap, so a message with absurd counts cannot crash the store.
    public mutating func merge(_ other: VersionRollup) {
        precondition(window == other.window, "merging rollups of different windows")
        merge(contentsOf: other)
    }

    /// Adds `other` into this rollup whatever `other`'s window (as ``merge(_:)`` does when the windows are equal): how
    /// the store merges a minute into its hour's row without a copy of the minute; same key only.
    package mutating func merge(contentsOf other: VersionRollup) {
        precondition(key == other.key, "merging rollups of different versions")
        batches = batches.saturatingAdding(other.batches)
        cleanBatches = cleanBatches.saturatingAdding(other.cleanBatches)
        decodes = decodes.saturatingAdding(other.decodes)
        installs.merge(other.installs)
        // Only when something is new: a union into a set shared with a copy copies it even when nothing is added.
        if !other.registeredTypes.isSubset(of: registeredTypes) { registeredTypes.formUnion(other.registeredTypes) }
        maxSchemaVersion = Self.maxOptional(maxSchemaVersion, other.maxSchemaVersion)
        clientDiscarded = clientDiscarded.saturatingAdding(other.clientDiscarded)
        releases.merge(bounded: other.releases)
        builds.merge(bounded: other.builds)
    }

    /// Counts one batch of `build` in this rollup's minute.
    public mutating func count(build: String) {
        builds.accumulate(VersionBuildTraffic(batches: 1, lastSeen: window.start), under: build)
        builds.keepWithinBound()
    }

    /// Attributes one batch of `decodes` decodes to each of `releases` (``VersionReleaseTraffic/attributed(_:)``).
    public mutating func attribute(decodes: Int64, to releases: [String]) {
        for release in releases {
            self.releases.accumulate(VersionReleaseTraffic(batches: 1, decodes: max(0, decodes)), under: release)
        }
        self.releases.keepWithinBound()
    }

    static func maxOptional(_ lhs: Int?, _ rhs: Int?) -> Int? {
        switch (lhs, rhs) {
        case (nil, let value), (let value, nil): return value
        case (let left?, let right?): return max(left, right)
        }
    }
}
