import Detector
import FlowmeterModels
import Rollups
import Testing

@Suite struct RegressionTests {
    let from = History.time("2026-11-30T06:00:00Z")
    let to = History.time("2026-11-30T10:00:00Z")

    /// `hologram_projector` flooding from 08:00 in the window, and (when given) an earlier episode `hoursBefore`
    /// the return that the backend then gated.
    func history(earlierEpisodeEndsHoursBefore hoursBefore: Int64?) -> History {
        let history = History()
        let back = History.time("2026-11-30T08:00:00Z")
        if let hoursBefore {
            // An hour of it, ending `hoursBefore` hours before it comes back.
            for minute in Int64(0)..<60 {
                history.events(
                    5, type: "hologram_projector", at: back.adding(seconds: -hoursBefore * 3600 - 3600 + minute * 60),
                    installs: 6)
            }
        }
        for minute in Int64(0)..<60 {
            let at = back.adding(seconds: minute * 60)
            history.traffic(at: at, registered: ["title_block"])
            history.events(10, type: "hologram_projector", at: at, installs: 8)
        }
        return history
    }

    func status(_ history: History, quiet: Duration = .seconds(48 * 3600)) throws -> UngatedType {
        var finder = UngatedTypeFinder()
        finder.configuration.regressionQuiet = quiet
        return try #require(try finder.report(reader: history.store, from: from, to: to).ungated.first)
    }

    @Test func typeBackAfterFortyEightQuietHoursIsRegressed() throws {
        let found = try status(history(earlierEpisodeEndsHoursBefore: 50))
        #expect(found.status == .regressed)
        #expect(found.lastSeenBefore == History.time("2026-11-28T06:00:00Z"))
        #expect(found.jsonValue.serialized().hasSuffix(#""status":"regressed"}"#))
    }

    @Test func typeSeenFortySevenHoursBeforeIsOngoing() throws {
        let found = try status(history(earlierEpisodeEndsHoursBefore: 47))
        #expect(found.status == .ongoing)
        #expect(found.lastSeenBefore == nil)
    }

    @Test func typeNeverSeenBeforeIsNew() throws {
        #expect(try status(history(earlierEpisodeEndsHoursBefore: nil)).status == .new)
    }

    @Test func theQuietStretchIsConfigurable() throws {
        let found = try status(history(earlierEpisodeEndsHoursBefore: 30), quiet: .seconds(24 * 3600))
        #expect(found.status == .regressed)
    }

    @Test func aRegressionInsideTheWindowCounts() throws {
        // A week-long window: seen on Monday, gated, back on Thursday.
        let history = History()
        let monday = History.time("2026-11-23T09:00:00Z")
        let thursday = History.time("2026-11-26T12:00:00Z")
        for at in [monday, thursday] {
            for minute in Int64(0)..<30 {
                history.traffic(at: at.adding(seconds: minute * 60))
                history.events(10, type: "hologram_projector", at: at.adding(seconds: minute * 60), installs: 8)
            }
        }
        let report = try UngatedTypeFinder().report(
            reader: history.store, from: History.time("2026-11-23T00:00:00Z"), to: History.time("2026-11-30T00:00:00Z"))
        #expect(report.ungated.first?.status == .regressed)
        #expect(report.ungated.first?.lastSeenBefore == History.time("2026-11-23T10:00:00Z"))
    }
}
