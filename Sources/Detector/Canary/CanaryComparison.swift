public import FlowmeterModels
public import Rollups

/// Blame by comparison: when two releases of one backend service serve the same app versions in the same window (a
/// canary beside the stable release), which release raises which diagnostic on which versions, the other not.
///
/// The rollups carry events per `backendRelease` (``SeriesRollup/releases``) but no traffic per release, so a
/// release's exposure to a version is measured by all the diagnostics it drew on that version: for each diagnostic
/// (kind, widget type) of a version, each release's rate is its events on that diagnostic ÷ its events on every
/// diagnostic of the version, both summed over the time buckets (`overlapSeconds`, 15 minutes by default) in which both
/// releases drew diagnostics on that version, so a release is only compared with one serving at the same time (a
/// release deployed after the other was replaced never is). A release raises a diagnostic when it drew at least ``minEvents`` of it at a rate at least
/// ``minRatio`` times the other release's (whose rate may be 0). A release counts as serving a version only when it drew
/// some diagnostic there: a release whose traffic on a version is entirely clean is invisible here (docs/cli.md,
/// `matrix`).
public struct CanaryComparison: Sendable {
    /// One diagnostic that one release raises and a sibling release of the same service does not.
    public struct Finding: Sendable, Hashable {
        public var appID: String
        /// The service (`page-api` of `page-api@2026.11.30-2`).
        public var service: String
        /// The release that raises it.
        public var raising: String
        /// The sibling release that, serving the same versions, does not (or far less).
        public var quiet: String
        public var kind: DiagnosticKind
        public var widgetType: String
        /// The app versions it happens on, ordered.
        public var versions: [String]
        /// The raising release's events of it on those versions.
        public var events: Int64
        /// Its events of it ÷ all its diagnostics on those versions.
        public var raisingRate: Double
        /// The same for the quiet release.
        public var quietRate: Double
    }

    /// The fewest events of a diagnostic a release must draw to be blamed for it.
    public let minEvents: Int64
    /// How many times the quiet release's rate the raising release's must be.
    public let minRatio: Double
    /// What was found, by app, service, kind, widget type, then raising release.
    public let findings: [Finding]

    /// Compares the releases that `rollups` (any window, any apps) carry.
    public init(rollups: [SeriesRollup], minEvents: Int64 = 10, minRatio: Double = 5, overlapSeconds: Int64 = 900) {
        self.minEvents = minEvents
        self.minRatio = minRatio
        struct VersionID: Hashable {
            var appID: String
            var platform: String
            var appVersion: String
        }
        struct Diagnostic: Hashable {
            var kind: DiagnosticKind
            var widgetType: String
        }
        // Per version and time bucket: each release's diagnostics, and per diagnostic each release's events. Only
        // buckets where both releases drew something are compared: they served the version at the same time.
        struct Slot: Hashable {
            var version: VersionID
            var bucket: Int64
        }
        var exposure: [Slot: [String: Int64]] = [:]
        var drawn: [Slot: [Diagnostic: [String: Int64]]] = [:]
        for rollup in rollups where !rollup.releases.isEmpty {
            let slot = Slot(
                version: VersionID(
                    appID: rollup.series.appID, platform: rollup.series.platform,
                    appVersion: rollup.series.appVersion),
                bucket: rollup.window.start - rollup.window.start % overlapSeconds)
            let diagnostic = Diagnostic(kind: rollup.series.kind, widgetType: rollup.series.widgetType)
            for (release, events) in rollup.releases {
                exposure[slot, default: [:]][release, default: 0] += events
                drawn[slot, default: [:]][diagnostic, default: [:]][release, default: 0] += events
            }
        }
        // Per (app, raising, quiet, diagnostic, version): the sums behind the rates over the shared buckets.
        struct Pair: Hashable {
            var appID: String
            var raising: String
            var quiet: String
            var diagnostic: Diagnostic
            var appVersion: String
        }
        struct Shared: Hashable {
            var appID: String
            var raising: String
            var quiet: String
            var appVersion: String
        }
        var sums: [Pair: (events: Int64, quietEvents: Int64)] = [:]
        var shared: [Shared: (raisingTotal: Int64, quietTotal: Int64)] = [:]
        for (slot, releases) in exposure {
            let byService = Dictionary(grouping: releases.keys, by: Self.service(of:))
            for (_, siblings) in byService where siblings.count >= 2 {
                for raising in siblings {
                    for quiet in siblings where quiet != raising {
                        let both = Shared(
                            appID: slot.version.appID, raising: raising, quiet: quiet,
                            appVersion: slot.version.appVersion)
                        var totals = shared[both] ?? (0, 0)
                        totals.raisingTotal += releases[raising]!
                        totals.quietTotal += releases[quiet]!
                        shared[both] = totals
                        for (diagnostic, counts) in drawn[slot] ?? [:] {
                            let pair = Pair(
                                appID: slot.version.appID, raising: raising, quiet: quiet, diagnostic: diagnostic,
                                appVersion: slot.version.appVersion)
                            var entry = sums[pair] ?? (0, 0)
                            entry.events += counts[raising] ?? 0
                            entry.quietEvents += counts[quiet] ?? 0
                            sums[pair] = entry
                        }
                    }
                }
            }
        }
        struct Key: Hashable {
            var appID: String
            var raising: String
            var quiet: String
            var diagnostic: Diagnostic
        }
        var found:
            [Key: (versions: Set<String>, events: Int64, raisingTotal: Int64, quietEvents: Int64, quietTotal: Int64)] =
                [:]
        for (pair, entry) in sums where entry.events >= minEvents {
            let totals = shared[
                Shared(appID: pair.appID, raising: pair.raising, quiet: pair.quiet, appVersion: pair.appVersion)]!
            let raisingRate = Double(entry.events) / Double(totals.raisingTotal)
            let quietRate = Double(entry.quietEvents) / Double(totals.quietTotal)
            guard raisingRate >= minRatio * quietRate else { continue }
            let key = Key(appID: pair.appID, raising: pair.raising, quiet: pair.quiet, diagnostic: pair.diagnostic)
            var merged = found[key] ?? ([], 0, 0, 0, 0)
            merged.versions.insert(pair.appVersion)
            merged.events += entry.events
            merged.raisingTotal += totals.raisingTotal
            merged.quietEvents += entry.quietEvents
            merged.quietTotal += totals.quietTotal
            found[key] = merged
        }
        findings = found.map { key, entry in
            Finding(
                appID: key.appID, service: Self.service(of: key.raising), raising: key.raising, quiet: key.quiet,
                kind: key.diagnostic.kind, widgetType: key.diagnostic.widgetType,
                versions: entry.versions.sorted(by: VersionOrder.less), events: entry.events,
                raisingRate: Self.rounded(Double(entry.events) / Double(entry.raisingTotal)),
                quietRate: Self.rounded(Double(entry.quietEvents) / Double(entry.quietTotal)))
        }
        .sorted {
            ($0.appID, $0.service, $0.kind.rawValue, $0.widgetType, $0.raising, $0.quiet)
                < ($1.appID, $1.service, $1.kind.rawValue, $1.widgetType, $1.raising, $1.quiet)
        }
    }

    /// The release the comparison blames for `kind` of `widgetType` in `appID` among `releases` (on `appVersion`
    /// when given): one that raises it while a sibling it was compared with does not; nil when none does (or several
    /// do).
    public func blamed(
        appID: String, kind: DiagnosticKind, widgetType: String, among releases: some Sequence<String>,
        appVersion: String? = nil
    ) -> String? {
        let candidates = Set(releases)
        let raising = Set(
            findings.filter {
                $0.appID == appID && $0.kind == kind && $0.widgetType == widgetType && candidates.contains($0.raising)
                    && (appVersion.map($0.versions.contains) ?? true)
            }.map(\.raising))
        return raising.count == 1 ? raising.first : nil
    }

    /// The service of a `service@version` release (the whole string when it has no `@`).
    public static func service(of release: String) -> String {
        guard let at = release.lastIndex(of: "@") else { return release }
        return String(release[..<at])
    }

    private static func rounded(_ value: Double) -> Double {
        (value * 10_000).rounded() / 10_000
    }
}
