import Detector
import FlowmeterModels
import Rollups
import Testing

/// A type with no history of its own that appears in force is a spike from a baseline of real zeros, as long as its
/// app was live before; the steady background (retired types, debug builds, duplicate ids) stays quiet.
@Suite struct SpikesFromZeroTests {
    /// How an app shows it was live in a bucket: it sent batches (receipt time matches occurrence, as in
    /// production), or only its other series' events are there (batches received later, as in a replay or the
    /// simulator, whose hours are compressed into a minute of receipt).
    enum Liveness: String, CaseIterable, CustomTestStringConvertible {
        case batches, otherEvents
        var testDescription: String { rawValue }
    }

    let start = History.time("2026-11-30T08:00:00Z")
    let end = History.time("2026-11-30T12:00:00Z")

    /// Four hours of the app's background: duplicate ids on the search page (30 to 34 per bucket) in every
    /// version, and batches when `liveness` says so.
    func background(_ history: History, liveness: Liveness, versions: [String] = ["5.2.1"]) {
        for index in Int64(0)..<48 {
            let at = start.adding(seconds: index * 300)
            for version in versions {
                if liveness == .batches { history.traffic(version: version, at: at, batches: 40) }
                history.events(
                    30 + index % 5, kind: .duplicateID, type: "product_grid", version: version, at: at, installs: 20)
            }
        }
    }

    /// `type` as unknownType from `flood` on: `count` events per bucket in every version, carrying `release`.
    func flood(
        _ history: History, type: String, from flood: Timestamp, count: Int64 = 120, versions: [String] = ["5.2.1"],
        release: String = "page-api@2"
    ) {
        var at = flood
        while at < end {
            for version in versions {
                history.events(
                    count, type: type, version: version, at: at, installs: 30, installPrefix: "\(version)-\(type)",
                    releases: [release: count])
            }
            at = at.adding(seconds: 300)
        }
    }

    @Test(arguments: Liveness.allCases)
    func newTypeFloodingAfterADeployIsASpikeAttributedToTheDeployThatCarriesItsRelease(liveness: Liveness) throws {
        let history = History()
        background(history, liveness: liveness)
        let onset = History.time("2026-11-30T10:00:00Z")
        // The release on the events names page-api@2, deployed 40 minutes before; trip-api finished a minute before
        // the onset and is the closer decoy.
        try history.deploy(service: "page-api", version: "2", finishedAt: History.time("2026-11-30T09:20:00Z"))
        try history.deploy(service: "trip-api", version: "3.8.1", finishedAt: History.time("2026-11-30T09:59:00Z"))
        flood(history, type: "hologram_projector", from: onset)

        let report = try SpikeDetector().report(reader: history.store, from: start, to: end)
        let across = try #require(
            report.spikes.first { $0.widgetType == "hologram_projector" && $0.appVersion == nil },
            "no spike: \(report.spikes)")
        #expect(across.onset == onset)
        #expect(across.baseline == 0)
        #expect(across.ratio == 120)
        #expect(across.suspectDeploy?.service == "page-api")
        #expect(across.suspectDeploy?.version == "2")
        #expect(across.suspectDeploy?.evidence == .backendRelease)
        #expect(across.suspectDeploy?.lagSeconds == Int64(40 * 60))
        #expect(report.spikes.allSatisfy { $0.widgetType == "hologram_projector" }, "background: \(report.spikes)")
        #expect(report.incidents.count == 1)
    }

    @Test func typoedTypeIsASpikeAndAnUngatedTypoOfTheRealOne() throws {
        let history = History()
        background(history, liveness: .batches)
        for index in Int64(0)..<48 {
            history.traffic(
                at: start.adding(seconds: index * 300), batches: 1, registered: ["image_text_card", "product_grid"])
        }
        let onset = History.time("2026-11-30T10:30:00Z")
        flood(history, type: "imgae_text_card", from: onset, count: 60, release: "page-api@3")

        let spikes = try SpikeDetector().report(reader: history.store, from: start, to: end)
        #expect(spikes.incidents.map(\.widgetType) == ["imgae_text_card"])
        #expect(spikes.incidents.first?.onset == onset)
        let ungated = try UngatedTypeFinder().report(reader: history.store, from: start, to: end)
        #expect(ungated.ungated.map(\.widgetType) == ["imgae_text_card"])
        #expect(ungated.ungated.first?.likelyTypoOf == "image_text_card")
    }

    @Test func retiredTypeFromTwoInstallsStaysQuiet() throws {
        let history = History()
        background(history, liveness: .batches)
        // Two installs with an old cached page: a few events now and then, never twenty in five minutes.
        for index in Int64(0)..<48 where index % 3 == 0 {
            history.events(
                1 + index % 4, type: "legacy_banner", at: start.adding(seconds: index * 300), installs: 2,
                installPrefix: "cached")
        }
        let spikes = try SpikeDetector().report(reader: history.store, from: start, to: end)
        #expect(spikes.spikes.isEmpty, "\(spikes.spikes)")
        let ungated = try UngatedTypeFinder().report(reader: history.store, from: start, to: end)
        #expect(ungated.ungated.isEmpty)
    }

    @Test func debugBuildsFloodingFromZeroStayQuiet() throws {
        let history = History()
        background(history, liveness: .batches)
        for index in Int64(24)..<48 {
            history.events(
                200, type: "dev_playground_widget", at: start.adding(seconds: index * 300), installs: 5,
                build: .debug)
        }
        let spikes = try SpikeDetector().report(reader: history.store, from: start, to: end)
        #expect(spikes.spikes.isEmpty, "\(spikes.spikes)")
    }

    @Test func steadyDuplicateIDsStayQuiet() throws {
        let history = History()
        background(history, liveness: .otherEvents, versions: ["5.1.0", "5.2.1", "5.3.0"])
        let spikes = try SpikeDetector().report(reader: history.store, from: start, to: end)
        #expect(spikes.spikes.isEmpty, "\(spikes.spikes)")
    }

    @Test func brandNewVersionIsJudgedOnlyOnceItHasFourBucketsOfItsOwn() throws {
        let history = History()
        background(history, liveness: .batches)
        // 5.3.0 appears at 10:00 with a type it reports from its first batch on (then steady); its version series
        // has no history, so the first buckets are not judged, and a steady level is no spike once they are.
        let arrival = History.time("2026-11-30T10:00:00Z")
        var at = arrival
        while at < end {
            history.traffic(version: "5.3.0", at: at, batches: 40)
            history.events(50, kind: .malformedPayload, type: "story_ring", version: "5.3.0", at: at, installs: 20)
            at = at.adding(seconds: 300)
        }
        var perVersionOnly = SpikeDetector.Configuration()
        perVersionOnly.perVersion = true
        let report = try SpikeDetector(configuration: perVersionOnly).report(
            reader: history.store, from: start, to: end)
        #expect(!report.spikes.contains { $0.appVersion == "5.3.0" }, "\(report.spikes)")
        // The app as a whole was live, so across versions the new series rises from real zeros.
        #expect(report.spikes.map(\.appVersion) == [nil])
        #expect(report.spikes.first?.onset == arrival)
    }

    @Test func aLongFloodStaysOneSpikeAgainstThePreFloodBaseline() throws {
        let history = History()
        background(history, liveness: .batches)
        let onset = History.time("2026-11-30T09:00:00Z")
        flood(history, type: "hologram_projector", from: onset)

        let report = try SpikeDetector().report(reader: history.store, from: start, to: end)
        let across = try #require(report.spikes.first { $0.appVersion == nil })
        // Three hours of flood: flagged buckets are stepped over, so the baseline stays the zeros before it.
        #expect(across.onset == onset)
        #expect(across.end == end)
        #expect(report.spikes.count == 2)
        #expect(report.incidents.count == 1)
    }
}
