import FlowmeterModels
import Rollups

/// One app's window, indexed for the ungated-type questions: who reports what, who registers what (manifests first,
/// then capabilities), who has traffic.
struct AppContext {
    /// One app version's traffic in the window, platforms merged.
    struct VersionTraffic {
        var installs = HyperLogLog()
        var batches: Int64 = 0
        var registeredTypes: Set<String> = []
        /// Whether any batch of this version sent a capabilities header (registered types or a schema version).
        var sendsCapabilities = false
    }

    /// Release `unknownType` rollups with a widget type, by type.
    let unknownTypeRollups: [String: [SeriesRollup]]
    /// Traffic per app version.
    let versions: [String: VersionTraffic]
    /// The app's manifests per version: where a version has one, it decides what the version renders.
    let manifests: [String: ManifestIndex.VersionShape]
    /// Versions reporting each type as `unknownType`.
    private let reportingVersions: [String: Set<String>]
    /// Types known to be real: registered, rendered, or reported as malformed or duplicate, with how many versions
    /// register each.
    private(set) var knownTypes: [String: Int] = [:]

    init(
        rollups: [SeriesRollup], versionRollups: [VersionRollup], extraKnownTypes: Set<String>,
        manifests: [String: ManifestIndex.VersionShape] = [:]
    ) {
        var unknown: [String: [SeriesRollup]] = [:]
        var reporting: [String: Set<String>] = [:]
        var known: [String: Int] = [:]
        for rollup in rollups where !rollup.series.widgetType.isEmpty {
            if rollup.series.kind == .unknownType {
                unknown[rollup.series.widgetType, default: []].append(rollup)
                reporting[rollup.series.widgetType, default: []].insert(rollup.series.appVersion)
            } else if rollup.series.kind == .malformedPayload || rollup.series.kind == .duplicateID {
                known[rollup.series.widgetType, default: 0] += 0
            }
        }
        var versions: [String: VersionTraffic] = [:]
        for rollup in versionRollups {
            var traffic = versions[rollup.key.appVersion] ?? VersionTraffic()
            traffic.installs.merge(rollup.installs)
            traffic.batches += rollup.batches
            traffic.registeredTypes.formUnion(rollup.registeredTypes)
            traffic.sendsCapabilities =
                traffic.sendsCapabilities || !rollup.registeredTypes.isEmpty || rollup.maxSchemaVersion != nil
            versions[rollup.key.appVersion] = traffic
        }
        for traffic in versions.values {
            for type in traffic.registeredTypes { known[type, default: 0] += 1 }
        }
        for type in extraKnownTypes where !type.isEmpty { known[type, default: 0] += 0 }
        for shape in manifests.values {
            for type in shape.types.keys { known[type, default: 0] += 1 }
        }
        unknownTypeRollups = unknown
        self.versions = versions
        self.manifests = manifests
        reportingVersions = reporting
        knownTypes = known
        for type in unknown.keys where !renderingVersions(of: type).isEmpty {
            knownTypes[type, default: 0] += 0
        }
    }

    /// Versions with traffic that render `widgetType`, ordered by app version: by the version's manifest where it has
    /// one; else registered in capabilities, or, for versions that send none, traffic and no `unknownType` for it.
    func renderingVersions(of widgetType: String) -> [String] {
        let reporting = reportingVersions[widgetType] ?? []
        return versions.compactMap { version, traffic in
            if let manifest = manifests[version] { return manifest.renders(widgetType) ? version : nil }
            if traffic.registeredTypes.contains(widgetType) { return version }
            if !traffic.sendsCapabilities && traffic.batches > 0 && !reporting.contains(version) { return version }
            return nil
        }
        .sorted(by: VersionOrder.less)
    }

    /// The known type nearest `widgetType` within `maxDistance` edits (and closer than the shorter name is long).
    func likelyOriginal(of widgetType: String, maxDistance: Int) -> String? {
        EditDistance.likelyTypoOf(widgetType, among: knownTypes, maxDistance: maxDistance)
    }
}
