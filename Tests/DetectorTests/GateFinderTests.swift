import Detector
import Foundation
import Rollups
import Testing

@Suite struct GateFinderTests {
    let day0 = History.time("2026-11-01T00:00:00Z")

    /// `days` days of traffic: 2,000 installs a day, the share below 5.3.0 following `below(day)`; 5.3.0 registers
    /// `hologram_projector`, 5.2.0 does not.
    func adoption(days: Int64, below: (Double) -> Double) -> History {
        let history = History()
        for day in Int64(0)..<days {
            let at = day0.adding(seconds: day * 86_400 + 43_200)
            let old = Int((2000 * below(Double(day))).rounded())
            if old > 0 {
                history.traffic(version: "5.2.0", at: at, batches: 10, installs: old, registered: ["title_block"])
            }
            history.traffic(
                version: "5.3.0", at: at, batches: 10, installs: 2000 - old,
                registered: ["title_block", "hologram_projector"])
        }
        return history
    }

    func report(_ history: History, days: Int64) throws -> GatesReport {
        try GateFinder().report(reader: history.store, from: day0, to: day0.adding(seconds: days * 86_400))
    }

    @Test func logisticAdoptionIsForecastToTheDayItCrossesOnePercent() throws {
        // Below share 1 / (1 + e^(0.3 (d − 10))): it crosses 1% at d = 10 + ln(99) / 0.3 ≈ 25.3, counted from the
        // first day's middle; twenty days are observed.
        let below = { (day: Double) in 1 / (1 + exp(0.3 * (day - 10))) }
        let history = adoption(days: 20, below: below)
        let gate = try #require(try report(history, days: 20).gates.first)
        #expect(gate.widgetType == "hologram_projector")
        #expect(gate.minAppVersion == "5.3.0")
        #expect(abs(gate.belowShare - below(19)) < 0.01)
        #expect(gate.forecast.basis == .fit)
        #expect(gate.forecast.threshold == 0.01)
        let crossing = day0.secondsSinceEpoch + 43_200 + Int64((10 + log(99) / 0.3) * 86_400)
        let date = try #require(gate.forecast.date)
        #expect(abs(date.secondsSinceEpoch - crossing) <= 86_400, "forecast \(date), truth \(crossing)")
        // Three weeks of trend, oldest first, falling.
        #expect(gate.trend.count == 3)
        #expect(gate.trend.map(\.belowShare) == gate.trend.map(\.belowShare).sorted(by: >))
    }

    @Test func fewerThanSevenDaysAreTooThinToForecast() throws {
        let history = adoption(days: 4) { 0.6 - 0.1 * $0 }
        let gate = try #require(try report(history, days: 4).gates.first)
        #expect(gate.forecast.basis == .tooThin)
        #expect(gate.forecast.date == nil)
        #expect(gate.jsonValue.serialized().contains(#""forecast":{"threshold":0.01,"date":null,"basis":"tooThin"}"#))
    }

    @Test func aShareThatDoesNotFallHasNoDate() throws {
        let history = adoption(days: 14) { _ in 0.4 }
        let gate = try #require(try report(history, days: 14).gates.first)
        #expect(gate.forecast.basis == .notFalling || gate.forecast.basis == .beyondHorizon)
        #expect(gate.forecast.date == nil)
    }

    @Test func aGateUnderTheThresholdCanGoToday() throws {
        let history = adoption(days: 3) { $0 < 2 ? 0.2 : 0.004 }
        let gate = try #require(try report(history, days: 3).gates.first)
        #expect(gate.forecast.basis == .alreadyBelow)
        #expect(gate.forecast.date == History.time("2026-11-04T00:00:00Z"))
    }

    @Test func typesEveryLiveVersionRendersOrANewerVersionDroppedNeedNoGate() throws {
        let history = History()
        let at = day0.adding(seconds: 3600)
        history.traffic(version: "5.2.0", at: at, installs: 10, registered: ["title_block", "legacy_banner"])
        history.traffic(version: "5.3.0", at: at, installs: 10, registered: ["title_block"])
        // A version that sends no capabilities says nothing about what it renders.
        history.traffic(version: "5.1.0", at: at, installs: 10)
        let report = try GateFinder().report(reader: history.store, from: day0, to: day0.adding(seconds: 86_400))
        #expect(report.gates.isEmpty, "\(report.gates.map(\.widgetType))")
    }

    @Test func manifestsArePreferredToCapabilities() throws {
        let history = History()
        let at = day0.adding(seconds: 3600)
        history.traffic(version: "5.2.0", at: at, installs: 30, registered: ["title_block"])
        history.traffic(version: "5.3.0", at: at, installs: 10)
        let manifests = RenderedTypes(types: ["com.example.shop": ["5.3.0": ["title_block", "story_ring"]]])
        let report = try GateFinder().report(
            reader: history.store, from: day0, to: day0.adding(seconds: 86_400), renderedTypes: manifests)
        let gate = try #require(report.gates.first)
        #expect(gate.widgetType == "story_ring")
        #expect(gate.minAppVersion == "5.3.0")
        #expect(abs(gate.belowShare - 0.75) < 0.02)
    }
}
