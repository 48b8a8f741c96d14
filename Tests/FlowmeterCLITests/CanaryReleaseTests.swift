import FlowmeterModels
import Foundation
import RollupStore
import Rollups
import TestSupport
import Testing

/// A canary, through the real binary: page-api@2026.11.29-1 (stable, deployed the day before) and
/// page-api@2026.11.30-canary (deployed at 07:55) serve shop 5.2.1 and 5.3.0 side by side from 08:00. From 09:00 the
/// canary sends `hologram_projector`, which 5.2.1 cannot draw; the stable release drew 40 of them first, at 09:00 (a
/// cached page), so the spike's onset bucket carries the stable release most: blame by the earliest events would
/// name it, the comparison names the canary.
///
/// Traffic per minute and version: 20 batches, 200 decodes; the batches with diagnostics are attributed to the
/// releases their events carry (before 08:00 5 to stable; then 4 to stable and 1 to the canary, 3 on 5.2.1 from
/// 09:00), the rest are clean.
final class CanaryStore: Sendable {
    let directory: TemporaryDirectory
    let path: String
    static let app = "com.example.shop"
    static let stable = "page-api@2026.11.29-1"
    static let canary = "page-api@2026.11.30-canary"
    static let old = "page-api@2026.11.20-1"

    init() throws {
        directory = try TemporaryDirectory(prefix: "flowmeter-canary")
        path = directory.file("flowmeter.sqlite")
        let store = try openRollupStore(url: path)
        var rollups: [PartialRollup.Rollup] = []
        for minute in Int64(0)..<240 {
            for version in ["5.2.1", "5.3.0"] {
                let breaks = version == "5.2.1" && minute >= 180
                var releases = [
                    Self.stable: VersionReleaseTraffic(batches: minute < 120 ? 5 : 4, decodes: minute < 120 ? 50 : 40)
                ]
                if minute >= 120 {
                    releases[Self.canary] = VersionReleaseTraffic(batches: breaks ? 3 : 1, decodes: breaks ? 30 : 10)
                }
                let attributed = releases.values.reduce(0) { $0 + $1.batches }
                rollups.append(
                    .version(
                        VersionRollup(
                            key: VersionKey(
                                appID: Self.app, platform: "ios", appVersion: version, buildConfiguration: .release),
                            window: MinuteWindow(start: SeededStore.start(minute: minute)), batches: 20,
                            cleanBatches: 20 - attributed, decodes: 200,
                            installs: SeededStore.sketch(40, prefix: version), releases: releases)))
                // Background both releases draw alike, in proportion to what they serve.
                var background = [Self.stable: Int64(minute < 120 ? 18 : 16)]
                if minute >= 120 { background[Self.canary] = 2 }
                rollups.append(.series(Self.events(version, .droppedElement, "", minute: minute, releases: background)))
            }
        }
        // 5.4.0, 06:00–07:00: the stable release leads (19 of 20 batches with diagnostics a minute); an old release
        // trails on cached pages (1).
        for minute in Int64(0)..<60 {
            rollups.append(
                .version(
                    VersionRollup(
                        key: VersionKey(
                            appID: Self.app, platform: "ios", appVersion: "5.4.0", buildConfiguration: .release),
                        window: MinuteWindow(start: SeededStore.start(minute: minute)), batches: 40, cleanBatches: 20,
                        decodes: 200, installs: SeededStore.sketch(40, prefix: "5.4.0"),
                        releases: [
                            Self.stable: VersionReleaseTraffic(batches: 19, decodes: 95),
                            Self.old: VersionReleaseTraffic(batches: 1, decodes: 5),
                        ])))
            rollups.append(
                .series(
                    Self.events("5.4.0", .droppedElement, "", minute: minute, releases: [Self.stable: 19, Self.old: 1]))
            )
        }
        rollups.append(
            .series(Self.events("5.2.1", .unknownType, "hologram_projector", minute: 180, releases: [Self.stable: 40])))
        for minute in Int64(182)..<230 {
            rollups.append(
                .series(
                    Self.events("5.2.1", .unknownType, "hologram_projector", minute: minute, releases: [Self.canary: 5])
                ))
        }
        _ = try store.apply(
            rollups.enumerated().map { PartialRollup(id: "canary/\($0.offset)", collector: "test", rollup: $0.element) }
        )
        try store.recordDeploy(
            DeployMarker(
                id: "stable", service: "page-api", version: "2026.11.29-1",
                finishedAt: Timestamp(rfc3339: "2026-11-29T10:00:00Z")!))
        try store.recordDeploy(
            DeployMarker(
                id: "canary", service: "page-api", version: "2026.11.30-canary",
                finishedAt: Timestamp(rfc3339: "2026-11-30T07:55:00Z")!))
    }

    deinit { directory.remove() }

    var window: [String] { ["--from", SeededStore.from, "--to", SeededStore.to, "--store", path] }

    static func events(
        _ version: String, _ kind: DiagnosticKind, _ type: String, minute: Int64, releases: [String: Int64]
    ) -> SeriesRollup {
        let at = Timestamp(secondsSinceEpoch: SeededStore.start(minute: minute) + 5)
        return SeriesRollup(
            series: RollupSeries(
                appID: app, platform: "ios", appVersion: version, buildConfiguration: .release, kind: kind,
                widgetType: type),
            window: MinuteWindow(start: SeededStore.start(minute: minute)), events: releases.values.reduce(0, +),
            installs: SeededStore.sketch(10, prefix: "\(version)-\(type)"), firstSeen: at, lastSeen: at,
            releases: releases)
    }
}

@Suite struct CanaryReleaseTests {
    private static func json(_ arguments: [String]) async throws -> (status: Int32, json: [String: Any]) {
        let result = try await FlowmeterExecutable.run(arguments, timeout: .seconds(60))
        let object = try JSONSerialization.jsonObject(with: Data(result.output.utf8))
        return (result.status, try #require(object as? [String: Any], "\(result.output) \(result.errors)"))
    }

    /// `flowmeter spikes`: the incident on 5.2.1 is the canary's deploy, not the stable release its onset carried most.
    @Test func theSpikeOfTheVersionOnlyTheCanaryBreaksBlamesTheCanary() async throws {
        let store = try CanaryStore()
        let (status, json) = try await Self.json(["spikes", "--format", "json"] + store.window)
        #expect(status == 3)
        let incidents = try #require(json["incidents"] as? [[String: Any]])
        let incident = try #require(
            incidents.first { $0["widgetType"] as? String == "hologram_projector" }, "\(incidents)")
        #expect(
            (incident["versions"] as? [[String: Any]])?.compactMap { $0["appVersion"] as? String } == ["5.2.1"],
            "\(incident)")
        // Its onset carried the stable release most: the earliest events alone would blame it.
        #expect((incident["backendReleases"] as? [String])?.contains(CanaryStore.stable) == true)
        let suspect = try #require(incident["suspectDeploy"] as? [String: Any])
        #expect(suspect["service"] as? String == "page-api")
        #expect(suspect["version"] as? String == "2026.11.30-canary")
        let spikes = try #require(json["spikes"] as? [[String: Any]]).filter {
            $0["widgetType"] as? String == "hologram_projector"
        }
        #expect(!spikes.isEmpty)
        #expect(
            spikes.allSatisfy {
                ($0["suspectDeploy"] as? [String: Any])?["version"] as? String == "2026.11.30-canary"
            }, "\(spikes)")
        // The background the releases drew alike raised nothing.
        #expect(!incidents.contains { $0["kind"] as? String == "droppedElement" }, "\(incidents)")
    }

    /// `flowmeter matrix`: each release's own decodes, clean rate and diagnostics per decode on 5.2.1, and the
    /// comparison's finding.
    @Test func theMatrixGivesEachReleaseItsOwnRatesAndBlamesTheCanary() async throws {
        let store = try CanaryStore()
        let (status, json) = try await Self.json(["matrix", "--format", "json"] + store.window)
        #expect(status == 3)
        let rows = try #require(json["rows"] as? [[String: Any]])
        func row(_ release: String, _ version: String) throws -> [String: Any] {
            try #require(
                rows.first { $0["release"] as? String == release && $0["appVersion"] as? String == version }, "\(rows)")
        }
        // 06:00–08:00 the stable release served 5.2.1 alone: the version's whole traffic is its own. From 08:00
        // only the batches attributed to it count; the rest of those buckets' decodes are shared.
        let stable = try row(CanaryStore.stable, "5.2.1")
        #expect(stable["releaseBatches"] as? Int == 120 * 20 + 120 * 4)
        #expect(stable["releaseDecodes"] as? Int == 120 * 200 + 120 * 40)
        #expect(stable["releaseCleanRate"] as? Double == 0.625)
        #expect(stable["sharedDecodes"] as? Int == 60 * 150 + 60 * 130)
        #expect(stable["events"] as? Int == 120 * 18 + 120 * 16 + 40)
        #expect(stable["releaseDiagnosticsPerThousandDecodes"] as? Double == 143.0556)
        let canary = try row(CanaryStore.canary, "5.2.1")
        #expect(canary["releaseBatches"] as? Int == 60 + 180)
        #expect(canary["releaseDecodes"] as? Int == 600 + 1800)
        #expect(canary["releaseCleanRate"] as? Double == 0)
        #expect(canary["events"] as? Int == 240 + 240)
        #expect(canary["releaseDiagnosticsPerThousandDecodes"] as? Double == 200)
        #expect(stable["bucketsBeside"] as? Int == 8)
        // 5.4.0: the stable release led every bucket, so the version's traffic less the old release's batch a
        // minute is its own; the old release has only its batches.
        let leading = try row(CanaryStore.stable, "5.4.0")
        #expect(leading["releaseBatches"] as? Int == 60 * 39)
        #expect(leading["releaseDecodes"] as? Int == 60 * 195)
        #expect(leading["releaseCleanRate"] as? Double == 0.5128)
        #expect(leading["releaseDiagnosticsPerThousandDecodes"] as? Double == 97.4359)
        #expect(leading["bucketsBeside"] as? Int == 0)
        #expect(leading["sharedDecodes"] as? Int == 0)
        let trailing = try row(CanaryStore.old, "5.4.0")
        #expect(trailing["releaseBatches"] as? Int == 60)
        #expect(trailing["releaseDecodes"] as? Int == 300)
        #expect(trailing["bucketsBeside"] as? Int == 4)
        #expect(trailing["sharedDecodes"] as? Int == 0)
        // The version's figures stay as they were, for readers of the earlier output.
        #expect(canary["versionDecodes"] as? Int == 240 * 200)
        #expect(canary["versionCleanRate"] as? Double == stable["versionCleanRate"] as? Double)
        let findings = try #require(json["canary"] as? [[String: Any]])
        let finding = try #require(findings.first { $0["widgetType"] as? String == "hologram_projector" })
        #expect(finding["raising"] as? String == CanaryStore.canary)
        #expect(finding["quiet"] as? String == CanaryStore.stable)
        #expect(finding["versions"] as? [String] == ["5.2.1"])
        #expect(findings.count == 1, "\(findings)")

        // The weekly report's "Backend releases compared" gives both releases' diagnostics per 1,000 decodes.
        let reportFile = store.directory.file("week.json")
        let report = try await FlowmeterExecutable.run(
            ["report", "--week", "2026-W49", "--format", "json", "--output", reportFile, "--store", store.path],
            timeout: .seconds(60))
        #expect(report.status == 0, "\(report.errors)")
        let week = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: reportFile)))
                as? [String: Any])
        let compared = try #require((week["canary"] as? [[String: Any]])?.first, "\(week["canary"] ?? "")")
        #expect(compared["raising"] as? String == CanaryStore.canary)
        #expect(compared["raisingPerThousandDecodes"] as? Double == 200)
        #expect(compared["quietPerThousandDecodes"] as? Double == 143.0556)

        let table = try await FlowmeterExecutable.run(["matrix"] + store.window, timeout: .seconds(60))
        #expect(table.output.contains("CLEAN, DIAG/1K per release on the version"), "\(table.output)")
        #expect(table.output.contains("200.0*"), "\(table.output)")
        #expect(table.output.contains("raises unknownType"), "\(table.output)")
    }

    /// The console's incident page names the comparison behind the suspect deploy, with each release's diagnostics
    /// per 1,000 of its decodes.
    @Test func theConsolesIncidentPageShowsTheReleasesCompared() async throws {
        let store = try CanaryStore()
        let keys = store.directory.file("keys.json")
        try Data(
            #"{"ingestKeys": [{"key": "ingest-key-0123456789", "apps": ["*"]}], "readKeys": [{"key": "read-key-0123456789", "apps": ["*"]}]}"#
                .utf8
        )
        .write(to: URL(fileURLWithPath: keys))
        let serve = try await FlowmeterExecutable.serve(
            [
                "--kafka", "none", "--store", store.path, "--keys", keys, "--prune-interval", "0",
                "--detect-interval", "0", "--log-level", "warning", "--salt", "00112233445566778899aabbccddeeff",
            ], within: .seconds(20), attempts: 3)
        defer { _ = serve.child.terminate(timeout: .seconds(20)) }
        let client = try HTTPTestClient(port: serve.port, readTimeout: .seconds(60))
        defer { client.close() }
        let signedIn = try client.request(
            "POST", "/console/sign-in",
            headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Origin", "http://127.0.0.1")],
            body: Array("key=read-key-0123456789&next=%2Fconsole%2F".utf8))
        let cookie = try #require(signedIn.header("Set-Cookie"), "\(signedIn.status)")
        let session = String(cookie.split(separator: ";")[0])
        let page = try client.request(
            "GET",
            "/console/incident?app=com.example.shop&kind=unknownType&type=hologram_projector"
                + "&from=2026-11-30T06%3A00%3A00Z&to=2026-11-30T10%3A00%3A00Z",
            headers: [("Cookie", session)])
        let html = String(decoding: page.body, as: UTF8.self)
        #expect(page.status == 200, "\(html)")
        #expect(html.contains("Chosen by comparison"), "\(html)")
        #expect(html.contains("id=\"releases-compared\""), "\(html)")
        // From the onset (09:00) to the window's end, on 5.2.1: the canary's 120 background and 240 hologram events
        // over its 1,800 attributed decodes, the stable release's 960 and 40 over its 2,400.
        #expect(html.contains("200.0 diagnostics per 1,000 of its decodes there"), "\(html)")
        #expect(html.contains("416.7 diagnostics per 1,000 of its decodes there"), "\(html)")
        #expect(html.contains("page-api@2026.11.30-canary raises it on 5.2.1"), "\(html)")
    }
}
