public import FlowmeterModels
public import Rollups

/// The stored capability manifests, indexed per app and app version for the finders: what each version renders and
/// which keys it requires, by the manifests its builds uploaded (docs/api.md#capability-manifests).
///
/// The finders merge platforms per app version, so one version's manifests (every platform and build) are combined
/// cautiously: a version renders a type only when every one of its manifests lists it; a key is required when any of
/// them requires it, optional when some reads it and none requires it; an arrangement is known when every manifest
/// that names arrangements names it. A gate that trusts the combination is safe on every platform.
public struct ManifestIndex: Sendable, Hashable {
    /// What one app version's manifests say, combined.
    public struct VersionShape: Sendable, Hashable {
        /// The types every manifest of the version lists, with their keys combined.
        public var types: [String: CapabilityManifest.TypeShape]
        /// The arrangements every manifest that names arrangements knows; nil when none names any.
        public var arrangements: Set<String>?
        /// The builds it combines.
        public var manifests: [CapabilityManifest.Identity]

        /// Combines the manifests of one version (at least one).
        public init(combining manifests: [CapabilityManifest]) {
            var types = manifests.first?.types ?? [:]
            var arrangements: Set<String>?
            for manifest in manifests {
                for (type, shape) in types {
                    guard let other = manifest.types[type] else {
                        types[type] = nil
                        continue
                    }
                    let required = Set(shape.required).union(other.required)
                    types[type] = CapabilityManifest.TypeShape(
                        required: Array(required), optional: Array(Set(shape.optional).union(other.optional)))
                }
                if let names = manifest.arrangements {
                    arrangements = arrangements.map { $0.intersection(names) } ?? Set(names)
                }
            }
            self.types = types
            self.arrangements = arrangements
            self.manifests = manifests.map(\.identity)
        }

        /// Whether the version renders `widgetType`.
        public func renders(_ widgetType: String) -> Bool { types[widgetType] != nil }
    }

    /// Per app, per app version, the combined manifests.
    public private(set) var versions: [String: [String: VersionShape]] = [:]
    /// Per app, per app version, per platform, that platform's manifests combined (builds merged).
    public private(set) var platforms: [String: [String: [String: VersionShape]]] = [:]

    /// Indexes `manifests` (any apps, versions, platforms and builds).
    public init(manifests: [CapabilityManifest] = []) {
        var grouped: [String: [String: [CapabilityManifest]]] = [:]
        var byPlatform: [String: [String: [String: [CapabilityManifest]]]] = [:]
        for manifest in manifests {
            grouped[manifest.appID, default: [:]][manifest.appVersion, default: []].append(manifest)
            byPlatform[manifest.appID, default: [:]][manifest.appVersion, default: [:]][manifest.platform, default: []]
                .append(manifest)
        }
        versions = grouped.mapValues { $0.mapValues(VersionShape.init(combining:)) }
        platforms = byPlatform.mapValues { $0.mapValues { $0.mapValues(VersionShape.init(combining:)) } }
    }

    /// Reads the manifests of `appID` (nil: every app) from `reader`.
    public static func load(reader: some RollupReader, appID: String?) throws -> ManifestIndex {
        ManifestIndex(manifests: try reader.manifests(appID: appID))
    }

    /// Whether there are no manifests at all.
    public var isEmpty: Bool { versions.isEmpty }

    /// The combined manifests of `appVersion` of `appID`, nil when it uploaded none.
    public func shape(appID: String, appVersion: String) -> VersionShape? {
        versions[appID]?[appVersion]
    }

    /// Every type some manifest of `appID` lists, with how many versions list it.
    public func knownTypes(of appID: String) -> [String: Int] {
        var known: [String: Int] = [:]
        for shape in (versions[appID] ?? [:]).values {
            for type in shape.types.keys { known[type, default: 0] += 1 }
        }
        return known
    }

    /// The table ``GateFinder`` reads: per app, per version with a manifest, the types it renders.
    public var renderedTypes: RenderedTypes {
        RenderedTypes(types: versions.mapValues { $0.mapValues { Set($0.types.keys) } })
    }
}
