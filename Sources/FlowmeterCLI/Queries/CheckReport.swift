import Detector
import FlowmeterModels
import Rollups

/// What `flowmeter check` found: for each widget type a payload would send, the share of each app's recent installs
/// whose version would not render it, or would find a key it requires missing.
///
/// Each live version is judged by its capability manifest where its build uploaded one
/// (docs/api.md#capability-manifests): the type is unknown when the manifest lacks it, malformed when a widget's
/// content lacks a key the manifest requires (named with the path of the object that lacks it), fine otherwise; keys no
/// manifest names are additive and listed as such; a section `arrangement` a version's manifest does not know falls
/// back to vertical. A version without a manifest is judged as before, and marked so (`source`): by
/// docs/api.md#query-output's rule (``AppTraffic/renders(_:_:)``), except that a type the app does not know at all
/// (``AppTraffic/isKnown(_:)``) is unknown to every version: versions without capabilities "render" anything they never
/// complained about, which says nothing about a type nobody has sent yet. Shares weigh versions by installs: the
/// installs of the versions in question ÷ all the app's installs in the window (HyperLogLog unions, so an install seen
/// in two versions counts once).
struct CheckReport: Sendable, JSONRepresentable {
    /// One live version's view of one type.
    struct VersionVerdict: Sendable, Hashable {
        var appVersion: String
        var installs: Int64
        /// This version's installs ÷ the app's installs, to 4 places.
        var installShare: Double
        var renders: Bool
        /// Where the verdict comes from: the version's manifest, its capabilities, or its traffic.
        var source: AppTraffic.Source
        /// Keys its manifest requires that some widget of the type lacks.
        var missingKeys: [String]
    }

    /// One app's view of one type.
    struct AppVerdict: Sendable, Hashable {
        var appID: String
        var installs: Int64
        var unknownInstalls: Int64
        /// Installs that would see the type as unknown ÷ all installs, to 4 places.
        var unknownShare: Double
        var versions: [VersionVerdict]

        var unknownVersions: [VersionVerdict] { versions.filter { !$0.renders } }
    }

    /// What would go wrong with a type in one app: unknown to some versions, or lacking a key some require.
    struct Problem: Sendable, Hashable {
        /// `unknownType` or `malformedPayload`.
        var kind: DiagnosticKind
        var appID: String
        /// The missing key (`items[].title`); nil for `unknownType`.
        var key: String?
        /// The first place it happens: the widget (unknownType) or the object that lacks the key.
        var path: String
        /// How many widgets of the type it happens to.
        var occurrences: Int
        /// The versions it happens to, ordered by app version.
        var versions: [String]
        /// Their installs ÷ the app's installs, to 4 places.
        var installShare: Double
    }

    /// One widget type of the payload.
    struct TypeVerdict: Sendable, Hashable {
        var widgetType: String
        var occurrences: Int
        /// The first few coding paths where it occurs.
        var paths: [String]
        /// Whether some app knows the type.
        var isKnown: Bool
        /// For a type no app knows, the known type it most likely misspells.
        var likelyTypoOf: String?
        var apps: [AppVerdict]
        /// Unknown types and missing keys, by app, kind, then key.
        var problems: [Problem] = []
        /// Keys the payload sends that no live version's manifest names: fine, since decoders ignore what they do
        /// not read.
        var additiveKeys: [String] = []

        /// The largest unknown share over the apps.
        var maxUnknownShare: Double { apps.map(\.unknownShare).max() ?? 0 }
        /// The largest share over its problems.
        var maxProblemShare: Double { problems.map(\.installShare).max() ?? 0 }
        /// The missing-key problems.
        var malformed: [Problem] { problems.filter { $0.kind == .malformedPayload } }
    }

    /// A section arrangement some live versions do not know: they lay the section out vertically instead.
    struct ArrangementVerdict: Sendable, Hashable {
        /// One app's versions that fall back.
        struct App: Sendable, Hashable {
            var appID: String
            var versions: [String]
            var installShare: Double
        }

        var arrangement: String
        var paths: [String]
        var apps: [App]
    }

    var window: QueryWindow
    var payload: String
    var maxUnknownShare: Double
    var widgetCount: Int
    var types: [TypeVerdict]
    var arrangements: [ArrangementVerdict] = []
    /// Per app, the live versions judged without a manifest; empty when no live version has one (nothing to mark).
    var withoutManifest: [String: [String]] = [:]

    /// Types over the threshold: unknown to, or lacking a key required by, more of an app's installs.
    var failing: [TypeVerdict] {
        types.filter { $0.maxUnknownShare > maxUnknownShare || $0.maxProblemShare > maxUnknownShare }
    }

    /// 3 when some type is over the threshold, else 0.
    var exitStatus: Int32 { failing.isEmpty ? 0 : 3 }

    /// Whether any app had live versions to judge against.
    var hasLiveVersions: Bool { types.contains { !$0.apps.isEmpty } }

    /// The most coding paths kept per type.
    static let maxPaths = 5

    /// Judges the page's widgets and sections against the apps' live versions.
    static func make(
        page: PageWalker.Page, apps: [String: AppTraffic], window: QueryWindow, payload: String,
        maxUnknownShare: Double
    ) -> CheckReport {
        var occurrences: [String: [PageWalker.Occurrence]] = [:]
        for occurrence in page.occurrences {
            occurrences[occurrence.widget.type, default: []].append(occurrence)
        }
        var known: [String: Int] = [:]
        for app in apps.values {
            known.merge(app.knownTypes) { max($0, $1) }
        }
        let liveApps = apps.keys.sorted().compactMap { apps[$0] }.filter { !$0.versions.isEmpty }
        var types: [TypeVerdict] = []
        for type in occurrences.keys.sorted() {
            let found = occurrences[type]!
            let isKnown = known[type] != nil
            var verdict = TypeVerdict(
                widgetType: type, occurrences: found.count, paths: Array(found.prefix(maxPaths).map(\.widget.path)),
                isKnown: isKnown,
                likelyTypoOf: isKnown
                    ? nil
                    : EditDistance.likelyTypoOf(
                        type, among: known, maxDistance: UngatedTypeFinder.Configuration().maxTypoDistance),
                apps: [])
            var additive: Set<String> = []
            for app in liveApps {
                let judged = judge(type, found, in: app)
                verdict.apps.append(judged.verdict)
                verdict.problems += judged.problems
                additive.formUnion(judged.additive)
            }
            verdict.additiveKeys = additive.sorted()
            types.append(verdict)
        }
        types.sort {
            let left = max($0.maxUnknownShare, $0.maxProblemShare)
            let right = max($1.maxUnknownShare, $1.maxProblemShare)
            return left != right ? left > right : $0.widgetType < $1.widgetType
        }
        var withoutManifest: [String: [String]] = [:]
        if liveApps.contains(where: { app in app.versions.keys.contains { app.source(of: $0) == .manifest } }) {
            for app in liveApps {
                let missing = app.orderedVersions.filter { app.source(of: $0) != .manifest }
                if !missing.isEmpty { withoutManifest[app.appID] = missing }
            }
        }
        return CheckReport(
            window: window, payload: payload, maxUnknownShare: maxUnknownShare, widgetCount: page.occurrences.count,
            types: types, arrangements: arrangements(page.sections, apps: liveApps), withoutManifest: withoutManifest)
    }

    private static func judge(_ type: String, _ occurrences: [PageWalker.Occurrence], in app: AppTraffic) -> (
        verdict: AppVerdict, problems: [Problem], additive: Set<String>
    ) {
        let known = app.isKnown(type)
        let total = app.totalInstalls
        let totalCount = total.count
        var unknown = HyperLogLog()
        var versions: [VersionVerdict] = []
        // Per missing key: the first place, the widgets lacking it, the versions requiring it, their installs.
        var missingKeys: [String: (path: String, widgets: Set<String>, versions: [String], installs: HyperLogLog)] = [:]
        var knownKeys: Set<String> = []
        var judgedByManifest = false
        for version in app.orderedVersions {
            let traffic = app.versions[version]!
            let source = app.source(of: version)
            let renders = known && app.renders(version, type)
            if !renders { unknown.merge(traffic.installs) }
            var lacking: [String] = []
            if renders, source == .manifest, let shape = app.manifests[version]?.types[type] {
                judgedByManifest = true
                knownKeys.formUnion(shape.allKeys)
                for occurrence in occurrences {
                    for missing in ShapeCheck.missing(
                        shape.required, in: occurrence.content, at: occurrence.contentPath)
                    {
                        var entry = missingKeys[missing.key] ?? (missing.path, [], [], HyperLogLog())
                        entry.widgets.insert(occurrence.widget.path)
                        if !lacking.contains(missing.key) {
                            lacking.append(missing.key)
                            entry.versions.append(version)
                            entry.installs.merge(traffic.installs)
                        }
                        missingKeys[missing.key] = entry
                    }
                }
            }
            versions.append(
                VersionVerdict(
                    appVersion: version, installs: traffic.installs.count,
                    installShare: rounded(share(traffic.installs.count, of: totalCount)), renders: renders,
                    source: source, missingKeys: lacking.sorted()))
        }
        let unknownInstalls = min(unknown.count, totalCount)
        let verdict = AppVerdict(
            appID: app.appID, installs: totalCount, unknownInstalls: unknownInstalls,
            unknownShare: rounded(share(unknownInstalls, of: totalCount)), versions: versions)
        var problems: [Problem] = []
        let notRendering = versions.filter { !$0.renders }.map(\.appVersion)
        if !notRendering.isEmpty, let first = occurrences.first {
            problems.append(
                Problem(
                    kind: .unknownType, appID: app.appID, key: nil, path: first.widget.path,
                    occurrences: occurrences.count, versions: notRendering, installShare: verdict.unknownShare))
        }
        for key in missingKeys.keys.sorted() {
            let entry = missingKeys[key]!
            problems.append(
                Problem(
                    kind: .malformedPayload, appID: app.appID, key: key, path: entry.path,
                    occurrences: entry.widgets.count, versions: entry.versions,
                    installShare: rounded(share(min(entry.installs.count, totalCount), of: totalCount))))
        }
        var additive: Set<String> = []
        if judgedByManifest {
            for occurrence in occurrences {
                additive.formUnion(ShapeCheck.additive(in: occurrence.content, known: knownKeys))
            }
        }
        return (verdict, problems, additive)
    }

    /// The sections whose arrangement some live versions' manifests do not list (`vertical`, the fallback, is always
    /// known); versions whose manifests name no arrangements, and versions without a manifest, are not judged.
    private static func arrangements(_ sections: [PageWalker.Section], apps: [AppTraffic]) -> [ArrangementVerdict] {
        var paths: [String: [String]] = [:]
        for section in sections {
            guard let name = section.arrangement, name != "vertical" else { continue }
            paths[name, default: []].append(section.path)
        }
        var verdicts: [ArrangementVerdict] = []
        for name in paths.keys.sorted() {
            var affected: [ArrangementVerdict.App] = []
            for app in apps {
                var installs = HyperLogLog()
                let versions = app.orderedVersions.filter { version in
                    guard let known = app.manifests[version]?.arrangements, !known.contains(name) else { return false }
                    installs.merge(app.versions[version]!.installs)
                    return true
                }
                guard !versions.isEmpty else { continue }
                let total = app.totalInstalls.count
                affected.append(
                    .init(
                        appID: app.appID, versions: versions,
                        installShare: rounded(share(min(installs.count, total), of: total))))
            }
            if !affected.isEmpty {
                verdicts.append(
                    ArrangementVerdict(arrangement: name, paths: Array(paths[name]!.prefix(maxPaths)), apps: affected))
            }
        }
        return verdicts
    }

    private static func share(_ part: Int64, of whole: Int64) -> Double {
        whole > 0 ? min(1, Double(part) / Double(whole)) : 0
    }

    private static func rounded(_ value: Double) -> Double {
        (value * 10_000).rounded() / 10_000
    }

    /// `{"from", "to", "payload", "maxUnknownShare", "widgets", "passed", "types": [{"widgetType", "occurrences",
    /// "paths", "known", "likelyTypoOf", "maxUnknownShare", "overThreshold", "problems": [{"kind", "key", "path",
    /// "versions", "installShare", "appID", "occurrences"}], "additiveKeys", "apps": [{"appID", "installs",
    /// "unknownInstalls", "unknownShare", "versions": [{"appVersion", "installs", "installShare", "renders", "source",
    /// "missingKeys"}]}]}], "arrangements": [{"arrangement", "fallback", "paths", "apps": [{"appID", "versions",
    /// "installShare"}]}]}`.
    var jsonValue: JSONValue {
        .object([
            ("from", .string(window.from.rfc3339String)), ("to", .string(window.to.rfc3339String)),
            ("payload", .string(payload)), ("maxUnknownShare", .number(maxUnknownShare)),
            ("widgets", .integer(Int64(widgetCount))), ("passed", .bool(exitStatus == 0)),
            ("types", .array(types.map { typeJSON($0) })),
            (
                "arrangements",
                .array(
                    arrangements.map { verdict in
                        .object([
                            ("arrangement", .string(verdict.arrangement)), ("fallback", .string("vertical")),
                            ("paths", .array(verdict.paths.map { .string($0) })),
                            (
                                "apps",
                                .array(
                                    verdict.apps.map { app in
                                        .object([
                                            ("appID", .string(app.appID)),
                                            ("versions", .array(app.versions.map { .string($0) })),
                                            ("installShare", .number(app.installShare)),
                                        ])
                                    })
                            ),
                        ])
                    })
            ),
        ])
    }

    private func typeJSON(_ type: TypeVerdict) -> JSONValue {
        .object([
            ("widgetType", .string(type.widgetType)), ("occurrences", .integer(Int64(type.occurrences))),
            ("paths", .array(type.paths.map { .string($0) })), ("known", .bool(type.isKnown)),
            ("likelyTypoOf", type.likelyTypoOf.map { .string($0) } ?? .null),
            ("maxUnknownShare", .number(type.maxUnknownShare)),
            ("overThreshold", .bool(type.maxUnknownShare > maxUnknownShare || type.maxProblemShare > maxUnknownShare)),
            (
                "problems",
                .array(
                    type.problems.map { problem in
                        .object([
                            ("kind", .string(problem.kind.rawValue)), ("key", problem.key.map { .string($0) } ?? .null),
                            ("path", .string(problem.path)), ("versions", .array(problem.versions.map { .string($0) })),
                            ("installShare", .number(problem.installShare)), ("appID", .string(problem.appID)),
                            ("occurrences", .integer(Int64(problem.occurrences))),
                        ])
                    })
            ),
            ("additiveKeys", .array(type.additiveKeys.map { .string($0) })),
            (
                "apps",
                .array(
                    type.apps.map { app in
                        .object([
                            ("appID", .string(app.appID)), ("installs", .integer(app.installs)),
                            ("unknownInstalls", .integer(app.unknownInstalls)),
                            ("unknownShare", .number(app.unknownShare)),
                            (
                                "versions",
                                .array(
                                    app.versions.map { version in
                                        .object([
                                            ("appVersion", .string(version.appVersion)),
                                            ("installs", .integer(version.installs)),
                                            ("installShare", .number(version.installShare)),
                                            ("renders", .bool(version.renders)),
                                            ("source", .string(version.source.rawValue)),
                                            ("missingKeys", .array(version.missingKeys.map { .string($0) })),
                                        ])
                                    })
                            ),
                        ])
                    })
            ),
        ])
    }
}
