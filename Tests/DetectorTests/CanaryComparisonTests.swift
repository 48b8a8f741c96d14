import Detector
import FlowmeterModels
import Rollups
import Testing

/// A canary: page-api@stable and page-api@canary serve shop 5.2.1 and 5.3.0 at the same time; only the canary sends
/// `hologram_projector`, which 5.2.1 cannot draw. The stable release also draws a few of them early (a cached page),
/// so the earliest events rank it first: blame by timing and frequency would name it, the comparison names the canary.
@Suite struct CanaryComparisonTests {
    static let start = Timestamp(rfc3339: "2026-11-30T08:00:00Z")!.secondsSinceEpoch
    static let app = "com.example.shop"

    static func rollup(
        _ version: String, _ kind: DiagnosticKind, _ type: String, minute: Int64, releases: [String: Int64]
    ) -> SeriesRollup {
        let at = Timestamp(secondsSinceEpoch: start + minute * 60 + 5)
        var installs = HyperLogLog()
        for index in 0..<10 { installs.insert(installHash: "\(version)-\(index)") }
        return SeriesRollup(
            series: RollupSeries(
                appID: app, platform: "ios", appVersion: version, buildConfiguration: .release, kind: kind,
                widgetType: type),
            window: MinuteWindow(start: start + minute * 60), events: releases.values.reduce(0, +),
            installs: installs, firstSeen: at, lastSeen: at, releases: releases)
    }

    static var rollups: [SeriesRollup] {
        var rollups: [SeriesRollup] = []
        for minute in Int64(0)..<30 {
            for version in ["5.2.1", "5.3.0"] {
                // Background: both releases draw dropped elements in proportion to their traffic (9:1).
                rollups.append(
                    rollup(
                        version, .droppedElement, "", minute: minute,
                        releases: ["page-api@stable": 90, "page-api@canary": 10]))
            }
        }
        // The stable release's few, first; then the canary's many, on 5.2.1 only.
        rollups.append(rollup("5.2.1", .unknownType, "hologram_projector", minute: 1, releases: ["page-api@stable": 6]))
        for minute in Int64(5)..<25 {
            rollups.append(
                rollup("5.2.1", .unknownType, "hologram_projector", minute: minute, releases: ["page-api@canary": 3]))
        }
        return rollups
    }

    @Test func theCanaryIsBlamedForWhatOnlyItRaisesOnTheVersionsItBreaks() throws {
        let comparison = CanaryComparison(rollups: Self.rollups)
        let finding = try #require(comparison.findings.first { $0.kind == .unknownType })
        #expect(finding.raising == "page-api@canary")
        #expect(finding.quiet == "page-api@stable")
        #expect(finding.widgetType == "hologram_projector")
        #expect(finding.versions == ["5.2.1"])
        #expect(finding.events == 60)
        #expect(comparison.findings.filter { $0.kind == .unknownType }.count == 1)
        // Background the releases draw alike is nobody's fault.
        #expect(!comparison.findings.contains { $0.kind == .droppedElement })
        #expect(
            comparison.blamed(
                appID: Self.app, kind: .unknownType, widgetType: "hologram_projector",
                among: ["page-api@stable", "page-api@canary"]) == "page-api@canary")
    }

    @Test func theUngatedFindersSuspectDeployIsTheCanaryNotTheEarliestRelease() throws {
        let deploys = [
            DeployMarker(
                service: "page-api", version: "stable", finishedAt: Timestamp(secondsSinceEpoch: Self.start - 86_400)),
            DeployMarker(
                service: "page-api", version: "canary", finishedAt: Timestamp(secondsSinceEpoch: Self.start - 600)),
        ]
        var versions: [VersionRollup] = []
        for version in ["5.2.1", "5.3.0"] {
            var installs = HyperLogLog()
            for index in 0..<10 { installs.insert(installHash: "\(version)-\(index)") }
            versions.append(
                VersionRollup(
                    key: VersionKey(
                        appID: Self.app, platform: "ios", appVersion: version, buildConfiguration: .release),
                    window: MinuteWindow(start: Self.start), batches: 10, decodes: 100, installs: installs,
                    registeredTypes: version == "5.3.0" ? ["hologram_projector"] : ["title_block"],
                    maxSchemaVersion: 1))
        }
        let report = UngatedTypeFinder().report(
            from: Timestamp(secondsSinceEpoch: Self.start), to: Timestamp(secondsSinceEpoch: Self.start + 3600),
            seriesRollups: Self.rollups, versionRollups: versions, deploys: deploys)
        let found = try #require(report.ungated.first { $0.widgetType == "hologram_projector" })
        #expect(found.suspectDeploy?.version == "canary", "\(String(describing: found.suspectDeploy))")
        // Without the comparison the earliest events' release, the stable one, would be the suspect.
        let attributor = DeployAttributor(deploys: deploys)
        #expect(
            attributor.suspect(firstSeen: found.firstSeen, earliestReleases: ["page-api@stable": 6])?.version
                == "stable")
    }
}

/// The comparison's blame is bounded by time: a release whose deploy began after the finding's first events did not
/// cause them, however the rollover's overlap compares.
@Suite struct ComparisonBlameTimeTests {
    static let firstSeen = Timestamp(rfc3339: "2026-12-06T02:00:00Z")!
    static let deploys = [
        DeployMarker(
            id: "d3", service: "page-api", version: "2026.12.06-3", environment: "production",
            startedAt: Timestamp(rfc3339: "2026-12-06T01:55:00Z")!,
            finishedAt: Timestamp(rfc3339: "2026-12-06T01:58:00Z")!),
        DeployMarker(
            id: "d4", service: "page-api", version: "2026.12.06-4", environment: "production",
            startedAt: Timestamp(rfc3339: "2026-12-06T02:38:00Z")!,
            finishedAt: Timestamp(rfc3339: "2026-12-06T02:41:00Z")!),
    ]

    @Test func aReleaseDeployedAfterTheFirstEventsIsNotBlamedByComparison() {
        let attributor = DeployAttributor(deploys: Self.deploys)
        let suspect = attributor.suspect(
            firstSeen: Self.firstSeen, earliestReleases: ["page-api@2026.12.06-3": 40],
            blamed: "page-api@2026.12.06-4")
        #expect(suspect?.version == "2026.12.06-3")
        #expect(suspect.map { $0.lagSeconds >= 0 } == true)
    }

    @Test func aReleaseDeployedWithinTheToleranceIsBlamedByComparison() {
        // A canary that began two minutes after the onset bucket's start (its first events fall in that bucket).
        var deploys = Self.deploys
        deploys[1].startedAt = Timestamp(secondsSinceEpoch: Self.firstSeen.secondsSinceEpoch + 120)
        let attributor = DeployAttributor(deploys: deploys)
        let suspect = attributor.suspect(
            firstSeen: Self.firstSeen, earliestReleases: ["page-api@2026.12.06-3": 40],
            blamed: "page-api@2026.12.06-4")
        #expect(suspect?.version == "2026.12.06-4")
    }
}
