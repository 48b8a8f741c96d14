import Detector
import FlowmeterModels
import Rollups

/// What `flowmeter check` found: for each widget type a payload would send, the share of each app's recent installs
/// whose version would not render it.
///
/// A version renders a type by CONTRACT §5's rule (``AppTraffic/renders(_:_:)``), except that a type the app does
/// not know at all (``AppTraffic/isKnown(_:)``) is unknown to every version: versions without capabilities "render"
/// anything they never complained about, which says nothing about a type nobody has sent yet. Shares weigh versions
/// by installs: the installs of the versions that would not render the type ÷ all the app's installs in the window
/// (HyperLogLog unions, so an install seen in two versions counts once).
struct CheckReport: Sendable, JSONRepresentable {
    /// One live version's view of one type.
    struct VersionVerdict: Sendable, Hashable {
        var appVersion: String
        var installs: Int64
        /// This version's installs ÷ the app's installs, to 4 places.
        var installShare: Double
        var renders: Bool
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

        /// The largest unknown share over the apps.
        var maxUnknownShare: Double { apps.map(\.unknownShare).max() ?? 0 }
    }

    var window: QueryWindow
    var payload: String
    var maxUnknownShare: Double
    var widgetCount: Int
    var types: [TypeVerdict]

    /// Types over the threshold.
    var failing: [TypeVerdict] { types.filter { $0.maxUnknownShare > maxUnknownShare } }

    /// 3 when some type is over the threshold, else 0.
    var exitStatus: Int32 { failing.isEmpty ? 0 : 3 }

    /// Whether any app had live versions to judge against.
    var hasLiveVersions: Bool { types.contains { !$0.apps.isEmpty } }

    /// The most coding paths kept per type.
    static let maxPaths = 5

    /// Judges `widgets` against the apps' live versions.
    static func make(
        widgets: [PageWalker.Widget], apps: [String: AppTraffic], window: QueryWindow, payload: String,
        maxUnknownShare: Double
    ) -> CheckReport {
        var occurrences: [String: [String]] = [:]
        var order: [String] = []
        for widget in widgets {
            if occurrences[widget.type] == nil { order.append(widget.type) }
            occurrences[widget.type, default: []].append(widget.path)
        }
        var known: [String: Int] = [:]
        for app in apps.values {
            known.merge(app.knownTypes) { max($0, $1) }
        }
        let liveApps = apps.keys.sorted().compactMap { apps[$0] }.filter { !$0.versions.isEmpty }
        var types: [TypeVerdict] = []
        for type in order.sorted() {
            let verdicts = liveApps.map { verdict(for: type, in: $0) }
            let isKnown = known[type] != nil
            types.append(
                TypeVerdict(
                    widgetType: type, occurrences: occurrences[type]!.count,
                    paths: Array(occurrences[type]!.prefix(maxPaths)), isKnown: isKnown,
                    likelyTypoOf: isKnown
                        ? nil
                        : EditDistance.likelyTypoOf(
                            type, among: known, maxDistance: UngatedTypeFinder.Configuration().maxTypoDistance),
                    apps: verdicts))
        }
        types.sort {
            $0.maxUnknownShare != $1.maxUnknownShare
                ? $0.maxUnknownShare > $1.maxUnknownShare : $0.widgetType < $1.widgetType
        }
        return CheckReport(
            window: window, payload: payload, maxUnknownShare: maxUnknownShare, widgetCount: widgets.count,
            types: types)
    }

    private static func verdict(for type: String, in app: AppTraffic) -> AppVerdict {
        let known = app.isKnown(type)
        let total = app.totalInstalls.count
        var unknown = HyperLogLog()
        var versions: [VersionVerdict] = []
        for version in app.orderedVersions {
            let traffic = app.versions[version]!
            let renders = known && app.renders(version, type)
            if !renders { unknown.merge(traffic.installs) }
            versions.append(
                VersionVerdict(
                    appVersion: version, installs: traffic.installs.count,
                    installShare: rounded(share(traffic.installs.count, of: total)), renders: renders))
        }
        let unknownInstalls = min(unknown.count, total)
        return AppVerdict(
            appID: app.appID, installs: total, unknownInstalls: unknownInstalls,
            unknownShare: rounded(share(unknownInstalls, of: total)), versions: versions)
    }

    private static func share(_ part: Int64, of whole: Int64) -> Double {
        whole > 0 ? min(1, Double(part) / Double(whole)) : 0
    }

    private static func rounded(_ value: Double) -> Double {
        (value * 10_000).rounded() / 10_000
    }

    /// `{"from", "to", "payload", "maxUnknownShare", "widgets", "passed", "types": [{"widgetType", "occurrences",
    /// "paths", "known", "likelyTypoOf", "maxUnknownShare", "overThreshold", "apps": [{"appID", "installs",
    /// "unknownInstalls", "unknownShare", "versions": [{"appVersion", "installs", "installShare", "renders"}]}]}]}`.
    var jsonValue: JSONValue {
        .object([
            ("from", .string(window.from.rfc3339String)), ("to", .string(window.to.rfc3339String)),
            ("payload", .string(payload)), ("maxUnknownShare", .number(maxUnknownShare)),
            ("widgets", .integer(Int64(widgetCount))), ("passed", .bool(exitStatus == 0)),
            ("types", .array(types.map { typeJSON($0) })),
        ])
    }

    private func typeJSON(_ type: TypeVerdict) -> JSONValue {
        .object([
            ("widgetType", .string(type.widgetType)), ("occurrences", .integer(Int64(type.occurrences))),
            ("paths", .array(type.paths.map { .string($0) })), ("known", .bool(type.isKnown)),
            ("likelyTypoOf", type.likelyTypoOf.map { .string($0) } ?? .null),
            ("maxUnknownShare", .number(type.maxUnknownShare)),
            ("overThreshold", .bool(type.maxUnknownShare > maxUnknownShare)),
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
                                        ])
                                    })
                            ),
                        ])
                    })
            ),
        ])
    }
}
