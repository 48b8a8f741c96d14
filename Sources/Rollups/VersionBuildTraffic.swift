import FlowmeterModels

/// The batches of one build (`client.build`, docs/api.md) of an app version, and the last minute one was received in.
///
/// A version rollup is keyed by app, platform, version and build configuration; the builds that sent its batches are
/// kept beside the counts (``VersionRollup/builds``), at most ``maxBuilds`` of them, the newest. A batch without
/// `client.build` names none; a batch split into parts counts once, with its first part.
public struct VersionBuildTraffic: BoundedTraffic, Hashable, Sendable {
    /// Batches that named the build.
    public var batches: Int64
    /// The start (epoch seconds, a multiple of 60) of the last minute a batch naming the build was received in.
    public var lastSeen: Int64

    /// Creates the traffic of one build.
    /// No traffic.
    public init() {
        self.init(batches: 0, lastSeen: 0)
    }

    public init(batches: Int64 = 0, lastSeen: Int64 = 0) {
        self.batches = batches
        self.lastSeen = lastSeen
    }

    /// Adds `other`'s batches (saturating at `Int64.max`) and keeps the later of the two minutes.
    public mutating func add(_ other: VersionBuildTraffic) {
        batches = batches.saturatingAdding(other.batches)
        lastSeen = max(lastSeen, other.lastSeen)
    }

    /// The most builds a version rollup keeps: an app version ships few builds, and the newest are the ones asked
    /// about.
    public static let maxBuilds = 16

    /// Whether build `lhs` is newer than build `rhs`: seen later, then the larger build number (``AppVersion``
    /// order), then the spelling that sorts last by UTF-8 bytes, then more batches. A total order, so the builds a
    /// bound keeps do not depend on a dictionary's order.
    public static func isNewer(
        _ lhs: (build: String, traffic: VersionBuildTraffic), than rhs: (build: String, traffic: VersionBuildTraffic)
    ) -> Bool {
        if lhs.traffic.lastSeen != rhs.traffic.lastSeen { return lhs.traffic.lastSeen > rhs.traffic.lastSeen }
        if lhs.build != rhs.build {
            let left = AppVersion(lhs.build)
            let right = AppVersion(rhs.build)
            if left < right || right < left { return right < left }
            return rhs.build.utf8.lexicographicallyPrecedes(lhs.build.utf8)
        }
        return lhs.traffic.batches > rhs.traffic.batches
    }

    /// The newest of `builds` (``isNewer(_:than:)``), nil when there is none.
    public static func newest(_ builds: [String: VersionBuildTraffic]) -> String? {
        var best: (build: String, traffic: VersionBuildTraffic)?
        for (build, traffic) in builds where best == nil || isNewer((build, traffic), than: best!) {
            best = (build, traffic)
        }
        return best?.build
    }

    /// `builds` cut to the ``maxBuilds`` newest (``isNewer(_:than:)``).
    public static func bounded(_ builds: [String: VersionBuildTraffic]) -> [String: VersionBuildTraffic] {
        guard builds.count > maxBuilds else { return builds }
        if builds.count == maxBuilds + 1 {
            // One build over, as counting a batch of a new build leaves it: the oldest goes, found in one pass
            // rather than by sorting (a version of many builds counted it for every such batch).
            var oldest = builds.startIndex
            var index = builds.index(after: oldest)
            while index != builds.endIndex {
                let (build, traffic) = builds[index]
                if isNewer((builds[oldest].key, builds[oldest].value), than: (build, traffic)) { oldest = index }
                builds.formIndex(after: &index)
            }
            var kept = builds
            kept.remove(at: oldest)
            return kept
        }
        let kept = builds.map { (build: $0.key, traffic: $0.value) }.sorted(by: isNewer).prefix(maxBuilds)
        return Dictionary(uniqueKeysWithValues: kept.map { ($0.build, $0.traffic) })
    }
}
