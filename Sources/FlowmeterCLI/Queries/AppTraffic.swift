import Detector
import FlowmeterModels
import Rollups

/// One app's release traffic in a window, indexed for the questions `versions`, `types` and `check` ask: which
/// versions are live, how many installs each has, and which widget types each registers or renders.
///
/// Platforms are merged per app version, as the detector does. Rendering follows docs/api.md#query-output: a
/// version with a capability manifest renders what its manifest lists (``ManifestIndex``); otherwise it renders a
/// type when its capabilities register it, or, when it sends no capabilities, when it had traffic and reported no
/// `unknownType` for it.
struct AppTraffic: Sendable {
    /// Where an answer about one version comes from, best first.
    enum Source: String, Sendable, Hashable, Comparable {
        /// The capability manifest its build uploaded.
        case manifest
        /// The capabilities header its batches send.
        case capabilities
        /// Its traffic: batches, and no unknownType for the type.
        case traffic

        static func < (lhs: Source, rhs: Source) -> Bool { lhs.rank < rhs.rank }
        private var rank: Int {
            switch self {
            case .manifest: 0
            case .capabilities: 1
            case .traffic: 2
            }
        }
    }

    /// One app version's traffic in the window, platforms merged.
    struct VersionTraffic: Sendable {
        var installs = HyperLogLog()
        var batches: Int64 = 0
        var cleanBatches: Int64 = 0
        var decodes: Int64 = 0
        var platforms: Set<String> = []
        var registeredTypes: Set<String> = []
        /// Whether any batch sent capabilities (registered types or a schema version).
        var sendsCapabilities = false
    }

    /// The app.
    let appID: String
    /// Traffic per app version (release builds with at least one batch in the window).
    private(set) var versions: [String: VersionTraffic] = [:]
    /// Per widget type, the versions that reported it as `unknownType` in the window.
    private(set) var unknownReporters: [String: Set<String>] = [:]
    /// Per widget type, release events per kind in the window.
    private(set) var eventsByKind: [String: [DiagnosticKind: Int64]] = [:]
    /// Types reported as `malformedPayload` or `duplicateID` (window or earlier history): only a registered type can
    /// produce those, so they are known types.
    private(set) var provenTypes: Set<String> = []
    /// The app's capability manifests per version (any version, with traffic in the window or not).
    private(set) var manifests: [String: ManifestIndex.VersionShape] = [:]

    init(appID: String) {
        self.appID = appID
    }

    /// App versions, oldest first by docs/api.md#ingest's numeric order.
    var orderedVersions: [String] { versions.keys.sorted(by: VersionOrder.less) }

    /// Installs of the whole app in the window (an install seen in two versions counts once).
    var totalInstalls: HyperLogLog {
        versions.values.reduce(into: HyperLogLog()) { $0.merge($1.installs) }
    }

    /// Where what is known about `version` comes from: its manifest, else its capabilities, else its traffic.
    func source(of version: String) -> Source {
        if manifests[version] != nil { return .manifest }
        return versions[version]?.sendsCapabilities == true ? .capabilities : .traffic
    }

    /// Whether `version` renders `widgetType`: by its manifest where it has one, else by docs/api.md#query-output's
    /// rule.
    func renders(_ version: String, _ widgetType: String) -> Bool {
        if let manifest = manifests[version] { return manifest.renders(widgetType) }
        guard let traffic = versions[version] else { return false }
        if traffic.registeredTypes.contains(widgetType) { return true }
        if traffic.sendsCapabilities { return false }
        return traffic.batches > 0 && !(unknownReporters[widgetType]?.contains(version) ?? false)
    }

    /// Versions whose manifest lists `widgetType` or, without a manifest, whose capabilities register it, oldest first.
    func registeringVersions(of widgetType: String) -> [String] {
        orderedVersions.filter { registers($0, widgetType) }
    }

    private func registers(_ version: String, _ widgetType: String) -> Bool {
        if let manifest = manifests[version] { return manifest.renders(widgetType) }
        return versions[version]?.registeredTypes.contains(widgetType) ?? false
    }

    /// Versions that render `widgetType`, oldest first.
    func renderingVersions(of widgetType: String) -> [String] {
        orderedVersions.filter { renders($0, widgetType) }
    }

    /// Every widget type this window says anything about: registered (manifests of live versions included), reported
    /// with some kind, or proven.
    var mentionedTypes: Set<String> {
        var types = provenTypes.union(eventsByKind.keys)
        for traffic in versions.values { types.formUnion(traffic.registeredTypes) }
        for version in versions.keys {
            if let shape = manifests[version] { types.formUnion(shape.types.keys) }
        }
        types.remove("")
        return types
    }

    /// Whether the app is known to have `widgetType` (the contract's "known"): some version's manifest or
    /// capabilities register it, it was reported as malformed or duplicate, or it appeared in the app's diagnostics
    /// and some version renders it.
    ///
    /// A type that appears nowhere is not known even though versions without capabilities would "render" it by the
    /// traffic rule: nothing says any build has it.
    func isKnown(_ widgetType: String) -> Bool {
        if provenTypes.contains(widgetType) { return true }
        if versions.values.contains(where: { $0.registeredTypes.contains(widgetType) }) { return true }
        if manifests.values.contains(where: { $0.renders(widgetType) }) { return true }
        return eventsByKind[widgetType] != nil && !renderingVersions(of: widgetType).isEmpty
    }

    /// Every known type, with the number of versions that register it (for typo tie-breaks).
    var knownTypes: [String: Int] {
        var known: [String: Int] = [:]
        for type in mentionedTypes where isKnown(type) {
            known[type] = versions.keys.filter { registers($0, type) }.count
        }
        for shape in manifests.values {
            for type in shape.types.keys where known[type] == nil { known[type] = 0 }
        }
        return known
    }

    /// Reads the window's release traffic from `reader`, per app (one app when `appID` is set).
    static func load(reader: some RollupReader, window: QueryWindow, appID: String?) throws -> [String: AppTraffic] {
        var apps: [String: AppTraffic] = [:]
        for rollup in try reader.versionRollups(from: window.from, to: window.to, appID: appID)
        where rollup.key.buildConfiguration == .release {
            apps[rollup.key.appID, default: AppTraffic(appID: rollup.key.appID)].add(rollup)
        }
        let query = SeriesQuery(from: window.from, to: window.to, appID: appID, buildConfiguration: .release)
        for rollup in try reader.seriesRollups(query) {
            apps[rollup.series.appID, default: AppTraffic(appID: rollup.series.appID)].add(rollup)
        }
        for kind in [DiagnosticKind.malformedPayload, .duplicateID] {
            for seen in try reader.firstSeen(appID: appID, kind: kind, buildConfiguration: .release)
            where !seen.widgetType.isEmpty {
                apps[seen.appID]?.provenTypes.insert(seen.widgetType)
            }
        }
        let manifests = try ManifestIndex.load(reader: reader, appID: appID)
        for (app, shapes) in manifests.versions where apps[app] != nil {
            apps[app]?.manifests = shapes
        }
        return apps
    }

    private mutating func add(_ rollup: VersionRollup) {
        var traffic = versions[rollup.key.appVersion] ?? VersionTraffic()
        traffic.installs.merge(rollup.installs)
        traffic.batches += rollup.batches
        traffic.cleanBatches += rollup.cleanBatches
        traffic.decodes += rollup.decodes
        traffic.platforms.insert(rollup.key.platform)
        traffic.registeredTypes.formUnion(rollup.registeredTypes)
        traffic.sendsCapabilities =
            traffic.sendsCapabilities || !rollup.registeredTypes.isEmpty || rollup.maxSchemaVersion != nil
        versions[rollup.key.appVersion] = traffic
    }

    private mutating func add(_ rollup: SeriesRollup) {
        let type = rollup.series.widgetType
        guard !type.isEmpty else { return }
        eventsByKind[type, default: [:]][rollup.series.kind, default: 0] += rollup.events
        if rollup.series.kind == .unknownType {
            unknownReporters[type, default: []].insert(rollup.series.appVersion)
        } else if rollup.series.kind == .malformedPayload || rollup.series.kind == .duplicateID {
            provenTypes.insert(type)
        }
    }
}
