public import FlowmeterModels
import FlowmeterWire
public import Rollups

/// Every answer `GET /v1/compatibility` can give, rendered once from the store's manifests, capabilities and traffic
/// (docs/api.md#reading): looking one up is a dictionary read, so a request never waits on the store.
///
/// Per app version: an answer per build that uploaded a manifest, the newest of them for a request without a build,
/// and, for builds no manifest describes, answers from the version's capabilities (or, without them, its traffic):
/// one per build its batches named (`client.build`, kept by the version rollups, ``VersionRollup/builds``), the
/// newest of them for a request without a build, and one with `"build": null` when no batch named a build.
/// Capabilities and traffic are kept per version, so every build's such answer lists the same types.
public struct CompatibilityIndex: Sendable {
    /// One rendered answer: the JSON body and its entity tag.
    public struct Answer: Sendable, Hashable {
        /// Where the answer comes from.
        public var source: Source
        /// The JSON body (docs/api.md#reading).
        public var body: [UInt8]
        /// The quoted entity tag of `body`.
        public var etag: String
    }

    /// Where an answer comes from, most certain first.
    public enum Source: String, Sendable, Hashable {
        /// The build's uploaded capability manifest: types and their key lists.
        case manifest
        /// The `registeredTypes` the version's batches send: types without key lists.
        case capabilities
        /// Types the version's traffic shows it knows (reported as malformed or duplicate, which only a registered
        /// type can be): the least certain.
        case traffic
    }

    /// An app version on a platform: what a request names before its build.
    public struct VersionID: Hashable, Sendable {
        public var appID: String
        public var platform: String
        public var appVersion: String

        /// Names an app version.
        public init(appID: String, platform: String, appVersion: String) {
            self.appID = appID
            self.platform = platform
            self.appVersion = appVersion
        }
    }

    struct Entry: Sendable {
        /// Answers from manifests, per build.
        var builds: [String: Answer] = [:]
        var newestBuild: Answer?
        /// Answers from capabilities or traffic, per build the batches named.
        var seenBuilds: [String: Answer] = [:]
        var newestSeenBuild: Answer?
        /// The capabilities or traffic answer with `"build": null`.
        var fallback: Answer?
        /// Whether every build the batches named is in ``seenBuilds``: then a build in neither map is unknown.
        var knowsEveryBuild = false
    }

    private var entries: [VersionID: Entry]

    /// When the index was built.
    public let builtAt: Timestamp

    /// The number of app versions it answers for.
    public var versionCount: Int { entries.count }

    /// The answer for a build of a version: the build's manifest, else the version's capabilities or traffic as
    /// that build's when its batches named it; without a build, the newest build's manifest, else the newest build
    /// the batches named. When the version's batches named no build, the version's answer (`"build": null`). Nil
    /// when nothing is known (404 `unknown_build`): not the version, or not the build while the version's batches
    /// name other builds.
    public func answer(for version: VersionID, build: String?) -> Answer? {
        guard let entry = entries[version] else { return nil }
        guard let build else { return entry.newestBuild ?? entry.newestSeenBuild ?? entry.fallback }
        if let answer = entry.builds[build] ?? entry.seenBuilds[build] { return answer }
        return entry.knowsEveryBuild ? nil : entry.fallback
    }

    /// An index that answers nothing.
    public init(builtAt: Timestamp) {
        self.entries = [:]
        self.builtAt = builtAt
    }

    /// Builds the index.
    ///
    /// - Parameters:
    ///   - manifests: every stored manifest.
    ///   - versions: the version rollups of the traffic window (capabilities, and which versions were seen).
    ///   - known: the series (any window length) of `malformedPayload` and `duplicateID` in the traffic window: types
    ///     each version knows.
    ///   - unknown: the series of `unknownType` in the last 24 h: `unknownInTraffic`.
    ///   - maxVersions: the most app versions kept; past it, versions with manifests first, then the most recently
    ///     seen.
    public init(
        manifests: [CapabilityManifest], versions: [VersionRollup], known: [SeriesBucket], unknown: [SeriesBucket],
        maxVersions: Int, builtAt: Timestamp
    ) {
        self.builtAt = builtAt
        var unknownTypes: [VersionID: Set<String>] = [:]
        for bucket in unknown where !bucket.series.widgetType.isEmpty {
            unknownTypes[Self.id(bucket.series.versionKey), default: []].insert(bucket.series.widgetType)
        }
        var byVersion: [VersionID: [CapabilityManifest]] = [:]
        for manifest in manifests {
            byVersion[
                VersionID(appID: manifest.appID, platform: manifest.platform, appVersion: manifest.appVersion),
                default: []
            ].append(manifest)
        }
        // Capabilities, the last minute seen and the builds the batches named, per version.
        var registered:
            [VersionID: (types: Set<String>, lastSeen: Int64, sent: Bool, builds: [String: VersionBuildTraffic])] =
                [:]
        for rollup in versions {
            let id = Self.id(rollup.key)
            var seen = registered[id] ?? ([], 0, false, [:])
            seen.lastSeen = max(seen.lastSeen, rollup.window.start + 60)
            if !rollup.registeredTypes.isEmpty || rollup.maxSchemaVersion != nil {
                seen.types.formUnion(rollup.registeredTypes)
                seen.sent = true
            }
            seen.builds.merge(rollup.builds) {
                var sum = $0
                sum.add($1)
                return sum
            }
            registered[id] = seen
        }
        var knownTypes: [VersionID: Set<String>] = [:]
        for bucket in known where !bucket.series.widgetType.isEmpty {
            knownTypes[Self.id(bucket.series.versionKey), default: []].insert(bucket.series.widgetType)
        }

        var ids = Set(byVersion.keys).union(registered.keys)
        if ids.count > maxVersions {
            let ranked = ids.sorted { lhs, rhs in
                let left = (byVersion[lhs] != nil, registered[lhs]?.lastSeen ?? 0)
                let right = (byVersion[rhs] != nil, registered[rhs]?.lastSeen ?? 0)
                if left.0 != right.0 { return left.0 }
                return left.1 > right.1
            }
            ids = Set(ranked.prefix(max(0, maxVersions)))
        }
        var entries: [VersionID: Entry] = [:]
        entries.reserveCapacity(ids.count)
        for id in ids {
            let unknownInTraffic = (unknownTypes[id] ?? []).sorted(by: Self.utf8Less)
            var entry = Entry()
            let built = (byVersion[id] ?? []).sorted(by: Self.newerFirst)
            for manifest in built {
                let answer = Self.render(
                    id, build: manifest.build, source: .manifest, updatedAt: manifest.uploadedAt,
                    types: manifest.types.mapValues { Optional($0) }, arrangements: manifest.arrangements,
                    unknownInTraffic: unknownInTraffic)
                if entry.newestBuild == nil { entry.newestBuild = answer }
                if let build = manifest.build, entry.builds[build] == nil { entry.builds[build] = answer }
            }
            if let seen = registered[id] {
                let source: Source
                let types: [String: CapabilityManifest.TypeShape?]
                if seen.sent {
                    source = .capabilities
                    types = Dictionary(uniqueKeysWithValues: seen.types.map { ($0, nil) })
                } else {
                    source = .traffic
                    let shown = (knownTypes[id] ?? []).subtracting(unknownTypes[id] ?? [])
                    types = Dictionary(uniqueKeysWithValues: shown.map { ($0, nil) })
                }
                entry.fallback = Self.render(
                    id, build: nil, source: source, updatedAt: Timestamp(secondsSinceEpoch: seen.lastSeen),
                    types: types, arrangements: nil, unknownInTraffic: unknownInTraffic)
                // Each build the batches named (the newest ``VersionBuildTraffic/maxBuilds``), updated as of the end
                // of the last minute it was seen in (no later than the version's).
                let builds = VersionBuildTraffic.bounded(seen.builds)
                entry.knowsEveryBuild = !builds.isEmpty && builds.count == seen.builds.count
                let newest = VersionBuildTraffic.newest(builds)
                for (build, traffic) in builds {
                    let answer = Self.render(
                        id, build: build, source: source,
                        updatedAt: Timestamp(secondsSinceEpoch: min(traffic.lastSeen, seen.lastSeen - 60) + 60),
                        types: types,
                        arrangements: nil, unknownInTraffic: unknownInTraffic)
                    entry.seenBuilds[build] = answer
                    if build == newest { entry.newestSeenBuild = answer }
                }
            }
            entries[id] = entry
        }
        self.entries = entries
    }

    private static func id(_ key: VersionKey) -> VersionID {
        VersionID(appID: key.appID, platform: key.platform, appVersion: key.appVersion)
    }

    /// The newest build first: the latest upload, then the larger build number, then the build's spelling.
    private static func newerFirst(_ lhs: CapabilityManifest, _ rhs: CapabilityManifest) -> Bool {
        let left = lhs.uploadedAt ?? Timestamp(secondsSinceEpoch: 0)
        let right = rhs.uploadedAt ?? Timestamp(secondsSinceEpoch: 0)
        if left != right { return left > right }
        let leftBuild = AppVersion(lhs.build ?? "")
        let rightBuild = AppVersion(rhs.build ?? "")
        if leftBuild < rightBuild || rightBuild < leftBuild { return rightBuild < leftBuild }
        return Self.utf8Less(rhs.build ?? "", lhs.build ?? "")
    }

    /// The docs/api.md#reading body; a type without a shape (capabilities, traffic) is `{}`: its keys are not known.
    static func render(
        _ id: VersionID, build: String?, source: Source, updatedAt: Timestamp?,
        types: [String: CapabilityManifest.TypeShape?], arrangements: [String]?, unknownInTraffic: [String]
    ) -> Answer {
        var body: [UInt8] = []
        body.reserveCapacity(256 + types.count * 48)
        func key(_ name: String) {
            body.append(contentsOf: "\"\(name)\":".utf8)
        }
        func string(_ value: String?) {
            if let value { JSONString.append(value, to: &body) } else { body.append(contentsOf: "null".utf8) }
        }
        func list(_ values: [String]) {
            body.append(UInt8(ascii: "["))
            for (index, value) in values.enumerated() {
                if index > 0 { body.append(UInt8(ascii: ",")) }
                JSONString.append(value, to: &body)
            }
            body.append(UInt8(ascii: "]"))
        }
        body.append(UInt8(ascii: "{"))
        key("appID")
        string(id.appID)
        body.append(UInt8(ascii: ","))
        key("platform")
        string(id.platform)
        body.append(UInt8(ascii: ","))
        key("appVersion")
        string(id.appVersion)
        body.append(UInt8(ascii: ","))
        key("build")
        string(build)
        body.append(UInt8(ascii: ","))
        key("source")
        string(source.rawValue)
        body.append(UInt8(ascii: ","))
        key("updatedAt")
        string(updatedAt?.rfc3339String)
        body.append(UInt8(ascii: ","))
        key("types")
        body.append(UInt8(ascii: "{"))
        for (index, name) in types.keys.sorted(by: Self.utf8Less).enumerated() {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            JSONString.append(name, to: &body)
            body.append(UInt8(ascii: ":"))
            if let shape = types[name] ?? nil {
                body.append(UInt8(ascii: "{"))
                key("required")
                list(shape.required)
                body.append(UInt8(ascii: ","))
                key("optional")
                list(shape.optional)
                body.append(UInt8(ascii: "}"))
            } else {
                body.append(contentsOf: "{}".utf8)
            }
        }
        body.append(contentsOf: "},".utf8)
        key("arrangements")
        if let arrangements { list(arrangements) } else { body.append(contentsOf: "null".utf8) }
        body.append(UInt8(ascii: ","))
        key("unknownInTraffic")
        list(unknownInTraffic)
        body.append(UInt8(ascii: "}"))
        return Answer(source: source, body: body, etag: entityTag(of: body))
    }

    /// A strong entity tag: 64-bit FNV-1a of the body, quoted hex. The same body always gets the same tag, so a
    /// refresh that changes nothing keeps every client's cached answer valid.
    static func entityTag(of body: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in body {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return "\"" + String(repeating: "0", count: 16 - hex.count) + hex + "\""
    }
}

extension CompatibilityIndex {
    /// Whether `lhs` sorts before `rhs` by UTF-8 bytes: the order the store lists names in.
    fileprivate static func utf8Less(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.lexicographicallyPrecedes(rhs.utf8)
    }
}
