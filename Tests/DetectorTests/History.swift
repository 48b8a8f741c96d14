import FlowmeterModels
import Rollups

/// A synthetic rollup history in an in-memory store, built one rollup at a time.
final class History {
    let store = InMemoryRollupStore()
    let appID: String
    private var sequence = 0

    init(appID: String = "com.example.shop") {
        self.appID = appID
    }

    /// 2026-11-30T00:00:00Z plus `seconds`.
    static func time(_ seconds: Int64 = 0) -> Timestamp {
        Timestamp(secondsSinceEpoch: 1_764_460_800 + seconds)
    }

    /// Parses an RFC 3339 time the test spells out.
    static func time(_ rfc3339: String) -> Timestamp {
        Timestamp(rfc3339: rfc3339)!
    }

    /// A sketch holding installs `prefix-0` … `prefix-(count-1)`.
    static func installs(_ count: Int, prefix: String) -> HyperLogLog {
        var sketch = HyperLogLog()
        for index in 0..<count { sketch.insert(hash: HyperLogLog.hash(string: "\(prefix)-\(index)")) }
        return sketch
    }

    /// Adds events of one series in the minute at `at`.
    func events(
        _ count: Int64, kind: DiagnosticKind = .unknownType, type: String, version: String = "5.2.1",
        at: Timestamp, installs: Int = 1, installPrefix: String? = nil, releases: [String: Int64] = [:],
        build: BuildConfiguration = .release, platform: String = "ios", messages: [String] = []
    ) {
        let series = RollupSeries(
            version: VersionKey(appID: appID, platform: platform, appVersion: version, buildConfiguration: build),
            kind: kind, widgetType: type)
        var rollup = SeriesRollup(
            series: series, window: MinuteWindow(containing: at), events: count,
            installs: Self.installs(installs, prefix: installPrefix ?? "\(version)-\(build)"), firstSeen: at,
            lastSeen: at, releases: releases)
        rollup.samples = messages.map {
            RollupSample(codingPath: "page.sections.Index 0.widgets.Index 0", message: $0, pageID: "home")
        }
        apply(.series(rollup))
    }

    /// Adds traffic of one app build in the minute at `at`.
    func traffic(
        version: String = "5.2.1", at: Timestamp, batches: Int64 = 10, decodes: Int64 = 0, installs: Int = 10,
        registered: Set<String> = [], build: BuildConfiguration = .release, platform: String = "ios"
    ) {
        let rollup = VersionRollup(
            key: VersionKey(appID: appID, platform: platform, appVersion: version, buildConfiguration: build),
            window: MinuteWindow(containing: at), batches: batches, decodes: decodes,
            installs: Self.installs(installs, prefix: "\(version)-\(build)"), registeredTypes: registered,
            maxSchemaVersion: registered.isEmpty ? nil : 7)
        apply(.version(rollup))
    }

    /// Records a capability manifest of `version` on `platform` listing `types` (keys by type).
    func manifest(
        version: String, platform: String = "ios", build: String? = nil,
        types: [String: CapabilityManifest.TypeShape], arrangements: [String]? = nil
    ) {
        try! store.recordManifest(
            CapabilityManifest(
                appID: appID, appVersion: version, platform: platform, build: build, types: types,
                arrangements: arrangements, uploadedAt: Self.time()))
    }

    /// Records a deploy.
    func deploy(service: String, version: String, finishedAt: Timestamp) throws {
        try store.recordDeploy(DeployMarker(service: service, version: version, finishedAt: finishedAt))
    }

    private func apply(_ rollup: PartialRollup.Rollup) {
        sequence += 1
        _ = try! store.apply([PartialRollup(id: "test/1/\(sequence)", collector: "test", rollup: rollup)])
    }
}
