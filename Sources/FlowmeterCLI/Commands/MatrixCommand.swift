import Detector
import FlowmeterModels
import Rollups

/// `flowmeter matrix`: backend release × app version, with the diagnostics each release drew on each version, and a
/// canary comparison where two releases of one service served the same versions.
enum MatrixCommand {
    static var command: Command {
        Command(
            name: "matrix",
            abstract: "Backend release × app version: diagnostics each release drew, and which canary breaks what.",
            discussion: """
                Release builds in the window. A row is one backend release (the backendRelease events carry, as
                service@version) on one app version: the diagnostics its events drew there, by kind, and their
                share of all the version's diagnostics. CLEAN and DIAG/1K are the release's decode-clean rate
                (clean batches ÷ batches) and diagnostics per 1,000 decodes on that version. Batches carry no
                release of their own, only their events do: each batch with diagnostics counts, per service, for
                the release most of its events carry. In each 15-minute bucket where a release led its service on
                a version (the only one seen, or 90% or more of the service's batches with diagnostics there), the
                version's traffic there is the release's, clean batches included, less the other releases'
                batches; elsewhere (beside a leading release, or in a canary where none leads) a release has only
                the batches whose events it carried (* after DIAG/1K: its clean traffic there is unknown, so CLEAN
                reads low and DIAG/1K high). Events without a backendRelease are the row "(none)", with the
                traffic of the buckets where no release was seen.

                CANARY: where two releases of one service drew diagnostics on the same version at the same time
                (the same 15-minute buckets), each diagnostic's rate per release over those buckets (its events ÷
                all the release's diagnostics there) is compared; a release that draws one at least 5 times the
                rate of its sibling (and 10 events or more) raises it. The detector's ungated finder blames that
                release as the suspect deploy, and so does the spike detector. A release whose traffic on a version
                is entirely clean draws nothing and is not seen here.

                Exit status: 0, 3 when the comparison blames a release, 1 error, 2 usage error.
                """,
            options: QueryOptions.common(),
            run: { arguments in try await run(arguments) }
        )
    }

    /// One release on one app version.
    struct Row: Sendable, Hashable {
        var appID: String
        var release: String
        var appVersion: String
        var events: Int64
        var byKind: [String: Int64]
        var shareOfVersionDiagnostics: Double
        var versionDecodes: Int64
        var versionCleanRate: Double?
        var versionDiagnosticsPerThousandDecodes: Double?
        /// The release's traffic on the version (``ReleaseTraffic``).
        var releaseBatches: Int64 = 0
        var releaseDecodes: Int64 = 0
        var releaseCleanRate: Double?
        var releaseDiagnosticsPerThousandDecodes: Double?
        /// The version's decodes, in buckets shared with a sibling release, attributed to neither.
        var sharedDecodes: Int64 = 0
        /// Buckets in which the release had only the batches attributed to it (``ReleaseTraffic/bucketsBeside``).
        var bucketsBeside: Int64 = 0
    }

    /// A release's traffic on one app version, from the version rollups' ``VersionRollup/releases``: per
    /// `bucketSeconds` bucket (and platform) where it led its service on the version (the only release of it seen,
    /// or one with at least ``leadingShare`` of its attributed batches), the version's whole traffic there less the
    /// other releases' attributed batches; otherwise only the batches attributed to it, and, where no release led,
    /// the rest of the bucket's decodes in `sharedDecodes`. `(none)` has the traffic of the buckets where no release
    /// was seen.
    struct ReleaseTraffic: Sendable, Hashable {
        var batches: Int64 = 0
        var cleanBatches: Int64 = 0
        var decodes: Int64 = 0
        var sharedDecodes: Int64 = 0
        /// Buckets in which it had only its attributed batches: beside a leading release, or with no release leading.
        var bucketsBeside: Int64 = 0
    }

    /// The share of its service's attributed batches in a bucket from which a release is taken to have served the
    /// version's whole traffic there.
    static let leadingShare = 0.9

    /// The bucket length within which one release alone of its service stands for the version's traffic: the
    /// canary comparison's (``CanaryComparison``).
    static let bucketSeconds: Int64 = 900

    struct VersionID: Hashable {
        var appID: String
        var appVersion: String
    }

    /// The traffic of each release on each app version (release builds).
    static func releaseTraffic(_ versions: [VersionRollup]) -> [VersionID: [String: ReleaseTraffic]] {
        struct Unit: Hashable {
            var appID: String
            var platform: String
            var appVersion: String
            var bucket: Int64
        }
        // Only the counts: merging whole rollups would merge an install sketch per minute.
        struct Counts {
            var batches: Int64 = 0
            var cleanBatches: Int64 = 0
            var decodes: Int64 = 0
            var releases: [String: VersionReleaseTraffic] = [:]
        }
        var units: [Unit: Counts] = [:]
        for rollup in versions where rollup.key.buildConfiguration == .release {
            let unit = Unit(
                appID: rollup.key.appID, platform: rollup.key.platform, appVersion: rollup.key.appVersion,
                bucket: rollup.window.start - ((rollup.window.start % bucketSeconds) + bucketSeconds) % bucketSeconds)
            var counts = units[unit] ?? Counts()
            counts.batches += rollup.batches
            counts.cleanBatches += rollup.cleanBatches
            counts.decodes += rollup.decodes
            for (release, traffic) in rollup.releases { counts.releases[release, default: .init()].add(traffic) }
            units[unit] = counts
        }
        var traffic: [VersionID: [String: ReleaseTraffic]] = [:]
        for (unit, rollup) in units {
            let id = VersionID(appID: unit.appID, appVersion: unit.appVersion)
            if rollup.releases.isEmpty {
                var none = traffic[id, default: [:]]["(none)"] ?? ReleaseTraffic()
                none.batches += rollup.batches
                none.cleanBatches += rollup.cleanBatches
                none.decodes += rollup.decodes
                traffic[id, default: [:]]["(none)"] = none
                continue
            }
            let byService = Dictionary(grouping: rollup.releases.keys, by: VersionReleaseTraffic.service(of:))
            for (_, siblings) in byService {
                let attributed = siblings.map { rollup.releases[$0]! }
                let attributedBatches = attributed.reduce(Int64(0)) { $0 + $1.batches }
                let attributedDecodes = attributed.reduce(Int64(0)) { $0 + $1.decodes }
                // The release that served the bucket: the only one of its service, or one carrying at least
                // `leadingShare` of the service's attributed batches (the others: stale cached pages, a trickle).
                let leading = siblings.first {
                    Double(rollup.releases[$0]!.batches) >= leadingShare * Double(attributedBatches)
                }
                for release in siblings {
                    var entry = traffic[id, default: [:]][release] ?? ReleaseTraffic()
                    let own = rollup.releases[release]!
                    if release == leading {
                        // The bucket's traffic less the other releases' attributed batches.
                        entry.batches += rollup.batches - (attributedBatches - own.batches)
                        entry.cleanBatches += rollup.cleanBatches
                        entry.decodes += max(0, rollup.decodes - (attributedDecodes - own.decodes))
                    } else {
                        entry.batches += own.batches
                        entry.decodes += own.decodes
                        entry.bucketsBeside += 1
                        if leading == nil { entry.sharedDecodes += max(0, rollup.decodes - attributedDecodes) }
                    }
                    traffic[id, default: [:]][release] = entry
                }
            }
        }
        return traffic
    }

    private static func run(_ arguments: ParsedArguments) async throws -> Int32 {
        let format = try OutputFormat.parse(arguments)
        let window = try QueryOptions.window(arguments)
        let appID = QueryOptions.appID(arguments)
        let store = try QueryOptions.openStore(arguments)
        let (series, versions, freshness) = try await QueryOptions.read {
            let freshness = try FreshnessNote.load(store, window: window)
            return (
                try store.seriesRollups(
                    SeriesQuery(from: window.from, to: window.to, appID: appID, buildConfiguration: .release)),
                try store.versionRollups(from: window.from, to: window.to, appID: appID), freshness
            )
        }
        let rows = self.rows(series: series, versions: versions)
        let canary = CanaryComparison(rollups: series)
        format.print(
            to: arguments.output, json: { json(rows, canary: canary, window: window) }, csv: { csv(rows) },
            table: { table(rows, canary: canary, window: window, style: $0) }, freshness: freshness)
        return canary.findings.isEmpty ? 0 : 3
    }

    /// The rows, by app, app version (oldest first), then events (most first) and release.
    static func rows(series: [SeriesRollup], versions: [VersionRollup]) -> [Row] {
        let byRelease = Self.releaseTraffic(versions)
        var traffic: [VersionID: (batches: Int64, clean: Int64, decodes: Int64)] = [:]
        for rollup in versions where rollup.key.buildConfiguration == .release {
            let id = VersionID(appID: rollup.key.appID, appVersion: rollup.key.appVersion)
            var entry = traffic[id] ?? (0, 0, 0)
            entry.batches += rollup.batches
            entry.clean += rollup.cleanBatches
            entry.decodes += rollup.decodes
            traffic[id] = entry
        }
        var cells: [VersionID: [String: (events: Int64, byKind: [String: Int64])]] = [:]
        var versionEvents: [VersionID: Int64] = [:]
        for rollup in series where rollup.series.buildConfiguration == .release {
            let id = VersionID(appID: rollup.series.appID, appVersion: rollup.series.appVersion)
            versionEvents[id, default: 0] += rollup.events
            var releases = rollup.releases
            let carried = releases.values.reduce(0, +)
            if rollup.events > carried { releases["(none)", default: 0] += rollup.events - carried }
            for (release, events) in releases {
                var cell = cells[id, default: [:]][release] ?? (0, [:])
                cell.events += events
                cell.byKind[rollup.series.kind.rawValue, default: 0] += events
                cells[id, default: [:]][release] = cell
            }
        }
        var rows: [Row] = []
        for (id, releases) in cells {
            let versionTraffic = traffic[id]
            for (release, cell) in releases {
                let total = versionEvents[id] ?? 0
                let served = byRelease[id]?[release] ?? ReleaseTraffic()
                rows.append(
                    Row(
                        appID: id.appID, release: release, appVersion: id.appVersion, events: cell.events,
                        byKind: cell.byKind,
                        shareOfVersionDiagnostics: total > 0 ? rounded(Double(cell.events) / Double(total)) : 0,
                        versionDecodes: versionTraffic?.decodes ?? 0,
                        versionCleanRate: versionTraffic.flatMap {
                            $0.batches > 0 ? rounded(Double($0.clean) / Double($0.batches)) : nil
                        },
                        versionDiagnosticsPerThousandDecodes: versionTraffic.flatMap {
                            $0.decodes > 0 ? rounded(Double(total) * 1000 / Double($0.decodes)) : nil
                        },
                        releaseBatches: served.batches, releaseDecodes: served.decodes,
                        releaseCleanRate: served.batches > 0
                            ? rounded(Double(served.cleanBatches) / Double(served.batches)) : nil,
                        releaseDiagnosticsPerThousandDecodes: served.decodes > 0
                            ? rounded(Double(cell.events) * 1000 / Double(served.decodes)) : nil,
                        sharedDecodes: served.sharedDecodes, bucketsBeside: served.bucketsBeside))
            }
        }
        return rows.sorted {
            if $0.appID != $1.appID { return $0.appID < $1.appID }
            if $0.appVersion != $1.appVersion { return VersionOrder.less($0.appVersion, $1.appVersion) }
            if $0.events != $1.events { return $0.events > $1.events }
            return $0.release < $1.release
        }
    }

    private static func rounded(_ value: Double) -> Double {
        (value * 10_000).rounded() / 10_000
    }

    /// `{"from", "to", "rows": [{"appID", "release", "appVersion", "events", "byKind", "shareOfVersionDiagnostics",
    /// "versionDecodes", "versionCleanRate", "versionDiagnosticsPerThousandDecodes", "releaseBatches",
    /// "releaseDecodes", "releaseCleanRate", "releaseDiagnosticsPerThousandDecodes", "sharedDecodes", "bucketsBeside"}],
    /// "canary": [{"appID", "service", "raising", "quiet", "kind", "widgetType", "versions", "events", "raisingRate",
    /// "quietRate"}]}`.
    static func json(_ rows: [Row], canary: CanaryComparison, window: QueryWindow) -> JSONValue {
        .object([
            ("from", .string(window.from.rfc3339String)), ("to", .string(window.to.rfc3339String)),
            (
                "rows",
                .array(
                    rows.map { row in
                        .object([
                            ("appID", .string(row.appID)), ("release", .string(row.release)),
                            ("appVersion", .string(row.appVersion)), ("events", .integer(row.events)),
                            (
                                "byKind",
                                .object(row.byKind.keys.sorted().map { ($0, JSONValue.integer(row.byKind[$0]!)) })
                            ),
                            ("shareOfVersionDiagnostics", .number(row.shareOfVersionDiagnostics)),
                            ("versionDecodes", .integer(row.versionDecodes)),
                            ("versionCleanRate", row.versionCleanRate.map { .number($0) } ?? .null),
                            (
                                "versionDiagnosticsPerThousandDecodes",
                                row.versionDiagnosticsPerThousandDecodes.map { .number($0) } ?? .null
                            ),
                            ("releaseBatches", .integer(row.releaseBatches)),
                            ("releaseDecodes", .integer(row.releaseDecodes)),
                            ("releaseCleanRate", row.releaseCleanRate.map { .number($0) } ?? .null),
                            (
                                "releaseDiagnosticsPerThousandDecodes",
                                row.releaseDiagnosticsPerThousandDecodes.map { .number($0) } ?? .null
                            ),
                            ("sharedDecodes", .integer(row.sharedDecodes)),
                            ("bucketsBeside", .integer(row.bucketsBeside)),
                        ])
                    })
            ),
            ("canary", .array(canary.findings.map(findingJSON))),
        ])
    }

    /// The raising and quiet releases' diagnostics per 1,000 decodes over each finding's versions, from `rows`.
    static func canaryRates(_ findings: [CanaryComparison.Finding], rows: [Row]) -> [CanaryComparison.Finding:
        WeeklyReport.CanaryRates]
    {
        var rates: [CanaryComparison.Finding: WeeklyReport.CanaryRates] = [:]
        for finding in findings {
            let versions = Set(finding.versions)
            func rate(_ release: String) -> Double? {
                let served = rows.filter {
                    $0.appID == finding.appID && $0.release == release && versions.contains($0.appVersion)
                }
                let decodes = served.reduce(Int64(0)) { $0 + $1.releaseDecodes }
                guard decodes > 0 else { return nil }
                return rounded(Double(served.reduce(Int64(0)) { $0 + $1.events }) * 1000 / Double(decodes))
            }
            rates[finding] = WeeklyReport.CanaryRates(raising: rate(finding.raising), quiet: rate(finding.quiet))
        }
        return rates
    }

    static func findingJSON(_ finding: CanaryComparison.Finding) -> JSONValue {
        .object([
            ("appID", .string(finding.appID)), ("service", .string(finding.service)),
            ("raising", .string(finding.raising)), ("quiet", .string(finding.quiet)),
            ("kind", .string(finding.kind.rawValue)), ("widgetType", .string(finding.widgetType)),
            ("versions", .array(finding.versions.map { .string($0) })), ("events", .integer(finding.events)),
            ("raisingRate", .number(finding.raisingRate)), ("quietRate", .number(finding.quietRate)),
        ])
    }

    static func csv(_ rows: [Row]) -> CSVTable {
        var csv = CSVTable(header: [
            "appID", "release", "appVersion", "events", "byKind", "shareOfVersionDiagnostics", "versionDecodes",
            "versionCleanRate", "versionDiagnosticsPerThousandDecodes", "releaseBatches", "releaseDecodes",
            "releaseCleanRate", "releaseDiagnosticsPerThousandDecodes", "sharedDecodes", "bucketsBeside",
        ])
        for row in rows {
            csv.rows.append([
                row.appID, row.release, row.appVersion, String(row.events),
                row.byKind.keys.sorted().map { "\($0)=\(row.byKind[$0]!)" }.joined(separator: " "),
                String(row.shareOfVersionDiagnostics), String(row.versionDecodes),
                row.versionCleanRate.map { String($0) } ?? "",
                row.versionDiagnosticsPerThousandDecodes.map { String($0) } ?? "", String(row.releaseBatches),
                String(row.releaseDecodes), row.releaseCleanRate.map { String($0) } ?? "",
                row.releaseDiagnosticsPerThousandDecodes.map { String($0) } ?? "", String(row.sharedDecodes),
                String(row.bucketsBeside),
            ])
        }
        return csv
    }

    static func table(
        _ rows: [Row], canary: CanaryComparison, window: QueryWindow, style: @escaping (String) -> String
    ) -> String {
        let span = "\(CellFormat.time(window.from)) – \(CellFormat.time(window.to)) UTC"
        guard !rows.isEmpty else { return "No release diagnostics (\(span))." }
        var table = TextTable(columns: [
            .text("APP", flexible: true, shrinkPriority: 1), .text("RELEASE", flexible: true, shrinkPriority: -1),
            .text("VERSION", flexible: true), .number("EVENTS"), .number("SHARE"), .number("CLEAN"),
            .number("DIAG/1K"), .text("TOP KIND", flexible: true, shrinkPriority: 2),
        ])
        for row in rows {
            let top = row.byKind.max { $0.value != $1.value ? $0.value < $1.value : $0.key > $1.key }
            table.append([
                row.appID, row.release, row.appVersion, String(row.events),
                CellFormat.percent(row.shareOfVersionDiagnostics), row.releaseCleanRate.map(CellFormat.percent) ?? "-",
                row.releaseDiagnosticsPerThousandDecodes.map {
                    String(format: "%.1f", $0) + (row.bucketsBeside > 0 ? "*" : "")
                } ?? "-",
                top.map { "\($0.key) \($0.value)" } ?? "-",
            ])
        }
        let app = table.removeColumnIfUniform("APP").map { " of " + Terminal.name($0) } ?? ""
        var lines = [
            table.rendered(style: style), "",
            "Release × version\(app) (\(span)); CLEAN, DIAG/1K per release on the version.",
        ]
        if rows.contains(where: { $0.bucketsBeside > 0 }) {
            lines += Terminal.wrapped(
                "* not the leading release in some buckets: only the batches carrying its events count there, so "
                    + "CLEAN reads low and DIAG/1K high (docs/cli.md, matrix).", indent: "")
        }
        if canary.findings.isEmpty {
            lines.append("Canary: no release raises a diagnostic its sibling does not.")
        } else {
            lines.append("")
            lines.append(style("Canary comparison"))
            for finding in canary.findings {
                lines += Terminal.wrapped(
                    "\(Terminal.name(finding.raising)) raises \(finding.kind.rawValue) "
                        + "\(Terminal.name(finding.widgetType)) on \(finding.versions.map(Terminal.name).joined(separator: ", ")) "
                        + "(\(finding.events) events, \(CellFormat.percent(finding.raisingRate)) of its diagnostics there); "
                        + "\(Terminal.name(finding.quiet)), serving the same versions, "
                        + "\(finding.quietRate == 0 ? "does not" : "at \(CellFormat.percent(finding.quietRate))").",
                    indent: "  ")
            }
        }
        return lines.joined(separator: "\n")
    }
}
