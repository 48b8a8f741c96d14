import Detector
import FlowmeterModels
import Rollups
import Testing

@Suite struct SpikeDetectorTests {
    /// Two days of steady history at five-minute resolution before `start`, one rollup per bucket.
    func steadyHistory(
        _ history: History, until start: Timestamp, days: Int64 = 2, type: String = "title_block",
        kind: DiagnosticKind = .malformedPayload, events: (Int64) -> Int64 = { 8 + $0 % 5 }, decodes: Int64 = 1000
    ) {
        let buckets = days * 288
        for index in 0..<buckets {
            let at = start.adding(seconds: -(buckets - index) * 300)
            history.traffic(at: at, batches: 50, decodes: decodes)
            history.events(events(index), kind: kind, type: type, at: at, installs: 5, releases: ["page-api@1": 1])
        }
    }

    @Test func sharpSpikeIsFlaggedWithOnsetPeakAndDeploy() throws {
        let history = History()
        let start = History.time("2026-11-30T08:00:00Z")
        steadyHistory(history, until: start)
        try history.deploy(service: "page-api", version: "2", finishedAt: History.time("2026-11-30T09:58:00Z"))
        for index in Int64(0)..<48 {
            let at = start.adding(seconds: index * 300)
            history.traffic(at: at, batches: 50, decodes: 1000)
            let spiking = (24..<27).contains(index)
            let count: Int64 = spiking ? (index == 25 ? 240 : 150) : 8 + index % 5
            history.events(
                count, kind: .malformedPayload, type: "title_block", at: at, installs: 5,
                releases: spiking ? ["page-api@2": count - 2, "page-api@1": 2] : ["page-api@1": count])
        }

        let report = try SpikeDetector().report(
            reader: history.store, from: start, to: History.time("2026-11-30T12:00:00Z"))
        #expect(report.spikes.count == 2)
        #expect(report.exitStatus == 3)
        let across = try #require(report.spikes.first { $0.appVersion == nil })
        #expect(across.kind == .malformedPayload)
        #expect(across.widgetType == "title_block")
        #expect(across.onset == History.time("2026-11-30T10:00:00Z"))
        #expect(across.peakWindowStart == History.time("2026-11-30T10:05:00Z"))
        #expect(across.end == History.time("2026-11-30T10:15:00Z"))
        #expect(across.count == 240)
        #expect(across.baseline >= 8 && across.baseline <= 12)
        #expect(across.ratio >= 20)
        #expect(across.isNormalized)
        #expect(across.backendReleases == ["page-api@2", "page-api@1"])
        #expect(across.suspectDeploy?.version == "2")
        #expect(across.suspectDeploy?.lagSeconds == 120)
        #expect(report.spikes.contains { $0.appVersion == "5.2.1" && $0.onset == across.onset })
    }

    @Test func slowRampIsNotASpike() throws {
        let history = History()
        let start = History.time("2026-11-30T00:00:00Z")
        steadyHistory(history, until: start, events: { _ in 10 })
        // From 10 to 200 events per five minutes over a day: twenty-fold, but never sharp.
        for index in Int64(0)..<288 {
            let at = start.adding(seconds: index * 300)
            history.traffic(at: at, batches: 50, decodes: 1000)
            history.events(10 + index * 190 / 287, kind: .malformedPayload, type: "title_block", at: at, installs: 5)
        }

        let report = try SpikeDetector().report(
            reader: history.store, from: start, to: start.adding(seconds: 86_400))
        #expect(report.spikes.isEmpty)
    }

    @Test func newAppVersionRampingUpIsNotASpike() throws {
        let history = History()
        let start = History.time("2026-11-30T08:00:00Z")
        steadyHistory(history, until: start, events: { _ in 40 }, decodes: 2000)
        // 5.3.0 arrives with a trickle of users, then a forced update moves almost everyone to it; both versions
        // report the same 2% of decodes.
        for index in Int64(0)..<48 {
            let at = start.adding(seconds: index * 300)
            let newDecodes: Int64 = index < 6 ? 50 : 1950
            history.traffic(version: "5.3.0", at: at, batches: 20, decodes: newDecodes)
            history.traffic(version: "5.2.1", at: at, batches: 20, decodes: 2000 - newDecodes)
            history.events(
                newDecodes / 50, kind: .malformedPayload, type: "title_block", version: "5.3.0", at: at, installs: 5)
            history.events(
                (2000 - newDecodes) / 50, kind: .malformedPayload, type: "title_block", version: "5.2.1", at: at,
                installs: 5)
        }

        let report = try SpikeDetector().report(
            reader: history.store, from: start, to: History.time("2026-11-30T12:00:00Z"))
        #expect(report.spikes.isEmpty)
    }

    @Test func withoutDecodesTheSameRampIsJudgedOnRawCounts() throws {
        // The control for the test above: the same forced update from an app that sends no decodes is a spike of
        // the new version's series, which is why normalization matters.
        let history = History()
        let start = History.time("2026-11-30T08:00:00Z")
        for index in Int64(0)..<48 {
            let at = start.adding(seconds: index * 300)
            let newEvents: Int64 = index < 6 ? 1 : 39
            history.traffic(version: "5.3.0", at: at, batches: 20)
            history.events(newEvents, kind: .malformedPayload, type: "title_block", version: "5.3.0", at: at)
        }

        let report = try SpikeDetector().report(
            reader: history.store, from: start, to: History.time("2026-11-30T12:00:00Z"))
        #expect(report.spikes.contains { $0.appVersion == "5.3.0" && !$0.isNormalized })
    }

    @Test func threeEventsAreNeverASpike() throws {
        let history = History()
        let start = History.time("2026-11-30T08:00:00Z")
        steadyHistory(history, until: start, events: { _ in 0 })
        for index in Int64(0)..<24 {
            let at = start.adding(seconds: index * 300)
            history.traffic(at: at, batches: 50, decodes: 1000)
            if index == 12 { history.events(3, type: "rare_widget", at: at, installs: 3) }
        }

        let report = try SpikeDetector().report(
            reader: history.store, from: start, to: History.time("2026-11-30T10:00:00Z"))
        #expect(report.spikes.isEmpty)
    }

    @Test func debugOnlyNoiseIsNeverASpike() throws {
        let history = History()
        let start = History.time("2026-11-30T08:00:00Z")
        for index in Int64(0)..<24 {
            let at = start.adding(seconds: index * 300)
            history.traffic(at: at, batches: 50, decodes: 1000, build: .debug)
            history.events(index == 12 ? 900 : 1, type: "dev_widget", at: at, installs: 20, build: .debug)
        }

        let report = try SpikeDetector().report(
            reader: history.store, from: start, to: History.time("2026-11-30T10:00:00Z"))
        #expect(report.spikes.isEmpty)
    }

    @Test func dailyPeakSeenOnEarlierDaysIsNotASpike() throws {
        let history = History()
        let start = History.time("2026-11-30T18:00:00Z")
        // Every evening from 18:00 the app's users trigger five times the usual events: seasonal, not a spike.
        let evening: (Int64) -> Int64 = { index in
            let minuteOfDay = (index * 5 + 18 * 60) % 1440
            return minuteOfDay >= 18 * 60 && minuteOfDay < 20 * 60 ? 60 : 12
        }
        steadyHistory(history, until: start, days: 3, events: { evening($0 + 288 * 3) })
        for index in Int64(0)..<24 {
            let at = start.adding(seconds: index * 300)
            history.traffic(at: at, batches: 50, decodes: 1000)
            history.events(60, kind: .malformedPayload, type: "title_block", at: at, installs: 5)
        }

        let report = try SpikeDetector().report(
            reader: history.store, from: start, to: History.time("2026-11-30T20:00:00Z"))
        #expect(report.spikes.isEmpty)

        // The control: without the seasonal baseline the same evening is flagged.
        var trailingOnly = SpikeDetector.Configuration()
        trailingOnly.seasonalDays = 0
        trailingOnly.seasonalWeeks = 0
        let control = try SpikeDetector(configuration: trailingOnly).report(
            reader: history.store, from: start, to: History.time("2026-11-30T20:00:00Z"))
        #expect(control.spikes.contains { $0.onset == start })
    }
}
