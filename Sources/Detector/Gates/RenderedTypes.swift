public import Rollups

/// Which widget types each app version renders: the input of ``GateFinder``.
///
/// Built from the capabilities apps send (`registeredTypes` in their version rollups) and from the manifests app
/// builds upload (docs/api.md#capability-manifests, ``ManifestIndex/renderedTypes``), the better source:
/// ``merging(preferring:)`` gives every version a manifest describes the manifest's list.
public struct RenderedTypes: Sendable, Hashable {
    /// Per app, per version, the types it renders; a version that is absent says nothing (no capabilities, no
    /// manifest).
    public var types: [String: [String: Set<String>]]

    /// Creates the table from explicit lists, such as manifests.
    public init(types: [String: [String: Set<String>]] = [:]) {
        self.types = types
    }

    /// The types release builds register in `rollups` (platforms merged), for versions that sent capabilities.
    public init(versionRollups rollups: [VersionRollup]) {
        var types: [String: [String: Set<String>]] = [:]
        for rollup in rollups
        where rollup.key.buildConfiguration == .release
            && (!rollup.registeredTypes.isEmpty || rollup.maxSchemaVersion != nil)
        {
            types[rollup.key.appID, default: [:]][rollup.key.appVersion, default: []].formUnion(rollup.registeredTypes)
        }
        self.types = types
    }

    /// This table with every version that `better` describes taken from `better` (manifests over capabilities).
    public func merging(preferring better: RenderedTypes) -> RenderedTypes {
        var merged = self
        for (app, versions) in better.types {
            for (version, types) in versions { merged.types[app, default: [:]][version] = types }
        }
        return merged
    }
}
