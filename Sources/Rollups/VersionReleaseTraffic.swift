/// The batches of an app build that one backend release served, as far as the batches say.
///
/// The wire format has no per-release decode count (docs/api.md: `decodes` is per batch, `backendRelease` per
/// event), so a batch is attributed to a release only through its events: for each service (`page-api` of
/// `page-api@2026.11.30-2`) whose releases its events carry, the batch counts once, with all its decodes, for the
/// release of that service that carried most of its events (ties by name). A batch without diagnostics, or whose
/// events carry no release, is attributed to none: the version's other counts (``VersionRollup/batches`` minus the
/// attributed ones) are where it is. For a batch split into parts, the first part's events decide.
public struct VersionReleaseTraffic: BoundedTraffic, Hashable, Sendable {
    /// Batches attributed to the release.
    public var batches: Int64
    /// Their decodes.
    public var decodes: Int64

    /// Creates the traffic of one release.
    /// No traffic.
    public init() {
        self.init(batches: 0, decodes: 0)
    }

    public init(batches: Int64 = 0, decodes: Int64 = 0) {
        self.batches = batches
        self.decodes = decodes
    }

    /// Adds `other`'s counts, saturating at `Int64.max`.
    public mutating func add(_ other: VersionReleaseTraffic) {
        batches = batches.saturatingAdding(other.batches)
        decodes = decodes.saturatingAdding(other.decodes)
    }

    /// The most releases a version rollup keeps, as a series rollup does (``SeriesRollup/maxReleases``).
    public static let maxReleases = SeriesRollup.maxReleases

    /// `releases` cut to the ``maxReleases`` with the most batches (then decodes, then by name).
    public static func bounded(_ releases: [String: VersionReleaseTraffic]) -> [String: VersionReleaseTraffic] {
        guard releases.count > maxReleases else { return releases }
        let kept = releases.sorted {
            if $0.value.batches != $1.value.batches { return $0.value.batches > $1.value.batches }
            if $0.value.decodes != $1.value.decodes { return $0.value.decodes > $1.value.decodes }
            return $0.key < $1.key
        }
        .prefix(maxReleases)
        return Dictionary(uniqueKeysWithValues: kept.map { ($0.key, $0.value) })
    }

    /// The service of a `service@version` release (the whole string when it has no `@`).
    public static func service(of release: String) -> Substring {
        guard let at = release.lastIndex(of: "@") else { return release[...] }
        return release[..<at]
    }

    /// The releases one batch is attributed to, from its events' releases and counts: per service, the release
    /// with the most events (ties by name). Empty when no event carries a release.
    public static func attributed(_ counts: [(release: String, events: Int64)]) -> [String] {
        guard let first = counts.first else { return [] }
        if counts.allSatisfy({ $0.release == first.release }) { return [first.release] }
        var byRelease: [String: Int64] = [:]
        for (release, events) in counts {
            byRelease[release, default: 0] = byRelease[release, default: 0].saturatingAdding(events)
        }
        var best: [Substring: (release: String, events: Int64)] = [:]
        for (release, events) in byRelease {
            let service = service(of: release)
            if let current = best[service],
                current.events > events || (current.events == events && current.release < release)
            {
                continue
            }
            best[service] = (release, events)
        }
        return best.values.map(\.release).sorted()
    }
}
