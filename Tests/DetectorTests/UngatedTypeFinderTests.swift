import Detector
import FlowmeterModels
import Rollups
import Testing

@Suite struct UngatedTypeFinderTests {
    let from = History.time("2026-11-30T06:00:00Z")
    let to = History.time("2026-11-30T10:00:00Z")

    func report(_ history: History) throws -> UngatedReport {
        try UngatedTypeFinder().report(reader: history.store, from: from, to: to)
    }

    @Test func typeThatNewerVersionsRegisterIsGatedAtTheFirstRegisteringVersion() throws {
        let history = History()
        let at = History.time("2026-11-30T08:47:00Z")
        history.traffic(version: "5.2.1", at: at, installs: 20, registered: ["title_block"])
        for version in ["5.3.0", "5.4.0", "5.10.0"] {
            history.traffic(version: version, at: at, registered: ["title_block", "hologram_projector"])
        }
        history.events(40, type: "hologram_projector", version: "5.2.1", at: at, installs: 10)

        let found = try #require(try report(history).ungated.first)
        #expect(found.widgetType == "hologram_projector")
        #expect(found.events == 40)
        #expect(found.installs == 10)
        #expect(found.affectedVersions.map(\.appVersion) == ["5.2.1"])
        #expect(found.affectedVersions[0].installShare == 0.5)
        #expect(found.renderingVersions == ["5.3.0", "5.4.0", "5.10.0"])
        #expect(found.suggestedMinAppVersion == "5.3.0")
        #expect(found.likelyTypoOf == nil)
        #expect(found.firstSeen == at)
    }

    @Test func typoOneEditAwayNamesTheKnownType() throws {
        let history = History()
        let at = History.time("2026-11-30T07:00:00Z")
        for version in ["5.2.1", "5.3.0"] {
            history.traffic(version: version, at: at, registered: ["title_block", "image_text_card"])
            history.events(30, type: "title_blok", version: version, at: at, installs: 8)
        }

        let found = try #require(try report(history).ungated.first)
        #expect(found.widgetType == "title_blok")
        #expect(found.renderingVersions.isEmpty)
        #expect(found.suggestedMinAppVersion == nil)
        #expect(found.likelyTypoOf == "title_block")
        #expect(found.affectedVersions.map(\.appVersion) == ["5.2.1", "5.3.0"])
    }

    @Test func typoOfATypeKnownOnlyFromMalformedPayloads() throws {
        let history = History()
        let at = History.time("2026-11-30T07:00:00Z")
        history.traffic(version: "5.2.1", at: at)
        history.events(2, kind: .malformedPayload, type: "image_text_card", version: "5.2.1", at: at)
        history.events(25, type: "imgae_text_card", version: "5.2.1", at: at, installs: 6)

        let found = try #require(try report(history).ungated.first)
        // No capabilities and the only version reports it: nothing renders it, so the typo check runs.
        #expect(found.renderingVersions.isEmpty)
        #expect(found.likelyTypoOf == "image_text_card")
    }

    @Test func retiredTypeFromTwoInstallsIsUnderTheFloor() throws {
        let history = History()
        let at = History.time("2026-11-30T07:00:00Z")
        history.traffic(version: "4.0.0", at: at)
        history.events(300, type: "legacy_banner", version: "4.0.0", at: at, installs: 2)

        #expect(try report(history).ungated.isEmpty)
        #expect(try report(history).exitStatus == 0)
    }

    @Test func debugOnlyNoiseIsNeverFlagged() throws {
        let history = History()
        let at = History.time("2026-11-30T07:00:00Z")
        history.traffic(version: "5.4.0", at: at, build: .debug)
        history.events(500, type: "dev_widget", version: "5.4.0", at: at, installs: 50, build: .debug)

        #expect(try report(history).ungated.isEmpty)
    }

    @Test func versionsWithoutCapabilitiesRenderWhatTheyDoNotReport() throws {
        let history = History()
        let at = History.time("2026-11-30T08:00:00Z")
        for version in ["5.2.1", "5.3.0", "5.4.0"] { history.traffic(version: version, at: at) }
        // Outside the window: no traffic in it, so it says nothing about rendering.
        history.traffic(version: "5.5.0", at: History.time("2026-11-30T11:00:00Z"))
        history.events(50, type: "hologram", version: "5.2.1", at: at, installs: 7)

        let found = try #require(try report(history).ungated.first)
        #expect(found.renderingVersions == ["5.3.0", "5.4.0"])
        #expect(found.suggestedMinAppVersion == "5.3.0")
        #expect(found.likelyTypoOf == nil)
    }

    @Test func releaseOnTheEarliestEventsBeatsACloserDeploy() throws {
        let history = History()
        let first = History.time("2026-11-30T08:47:00Z")
        try history.deploy(
            service: "page-api", version: "2026.11.30-2", finishedAt: History.time("2026-11-30T08:44:10Z"))
        try history.deploy(service: "recs-api", version: "7", finishedAt: History.time("2026-11-30T08:46:30Z"))
        history.traffic(version: "5.2.1", at: first)
        history.events(
            10, type: "hologram_projector", at: first, installs: 6, releases: ["page-api@2026.11.30-2": 10])
        history.events(
            30, type: "hologram_projector", at: first.adding(minutes: 5), installs: 6,
            releases: ["recs-api@7": 30])

        let found = try #require(try report(history).ungated.first)
        let deploy = try #require(found.suspectDeploy)
        #expect(deploy.service == "page-api")
        #expect(deploy.version == "2026.11.30-2")
        #expect(deploy.lagSeconds == 170)
        #expect(deploy.evidence == .backendRelease)
    }

    @Test func withoutAMatchingReleaseTheClosestEarlierDeployInTheWindowIsSuspected() throws {
        let history = History()
        let first = History.time("2026-11-30T08:47:00Z")
        try history.deploy(service: "page-api", version: "1", finishedAt: History.time("2026-11-30T08:40:00Z"))
        try history.deploy(service: "recs-api", version: "7", finishedAt: History.time("2026-11-30T08:46:00Z"))
        try history.deploy(service: "late-api", version: "9", finishedAt: History.time("2026-11-30T08:48:00Z"))
        history.traffic(version: "5.2.1", at: first)
        history.events(40, type: "hologram_projector", at: first, installs: 6, releases: ["other@3": 40])

        let deploy = try #require(try report(history).ungated.first?.suspectDeploy)
        #expect(deploy.service == "recs-api")
        #expect(deploy.lagSeconds == 60)
        #expect(deploy.evidence == .timing)
    }

    @Test func noDeployWithinTheWindowIsNull() throws {
        let history = History()
        let first = History.time("2026-11-30T08:47:00Z")
        try history.deploy(service: "page-api", version: "1", finishedAt: History.time("2026-11-30T07:40:00Z"))
        history.traffic(version: "5.2.1", at: first)
        history.events(40, type: "hologram_projector", at: first, installs: 6)

        let found = try #require(try report(history).ungated.first)
        #expect(found.suspectDeploy == nil)
    }

    @Test(arguments: [
        ("title_block", "title_block", 0), ("title_block", "title_blok", 1), ("title_block", "titel_block", 1),
        ("title_block", "tilte_blcok", 2), ("ca", "abc", 2), ("", "abc", 3), ("hologram", "carousel", 7),
    ])
    func damerauLevenshteinDistance(a: String, b: String, expected: Int) {
        #expect(EditDistance.damerauLevenshtein(a, b) == expected)
        #expect(EditDistance.damerauLevenshtein(b, a) == expected)
    }
}

extension Timestamp {
    func adding(minutes: Int64) -> Timestamp {
        Timestamp(secondsSinceEpoch: secondsSinceEpoch + minutes * 60, nanoseconds: nanoseconds)
    }

    func adding(seconds: Int64) -> Timestamp {
        Timestamp(secondsSinceEpoch: secondsSinceEpoch + seconds, nanoseconds: nanoseconds)
    }
}
