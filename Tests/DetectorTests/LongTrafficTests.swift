import Detector
import DetectorBenchmarks
import FlowmeterModels
import Rollups
import Testing

/// Ten days of seeded, noisy traffic from three small apps and a large one (``LongTraffic/standard(days:seed:)``),
/// with issue 39's planted causes: each found as one incident with its deploy, the 40% rise and the background
/// quiet. `flowmeter-bench detector` runs the same over more days and seeds (docs/detector.md quotes it).
@Suite struct LongTrafficTests {
    @Test func everyPlantedCauseIsOneIncidentWithItsDeployAndTheBackgroundStaysQuiet() throws {
        let traffic = LongTraffic.standard(days: 10, seed: 39)
        let score = try DetectorScore.measure(traffic)

        for result in score.plants {
            let found = result.incidents.map {
                "\($0.onset.rfc3339String) \($0.suspectDeploy.map { "\($0.service)@\($0.version)" } ?? "none")"
            }
            #expect(result.isCorrect, "\(result.plant.name): \(found)")
            if result.plant.isIncident, let delay = result.delaySeconds {
                // Found from its first or second bucket, not once it had become its own baseline.
                #expect(delay <= 2 * LongTraffic.bucketSeconds, "\(result.plant.name): \(delay) s")
            }
        }
        // Under one false incident per app per 30 days: 36 app-days here, so at most one, and expected none.
        let falseOnes = score.falseIncidents.map { "\($0.appID) \($0.kind.rawValue) \($0.widgetType) \($0.onset)" }
        #expect(score.falseIncidents.count <= 1, "\(falseOnes)")
    }

    @Test func theCanaryIsCaughtAtFifteenPercentAsANewRelease() throws {
        let traffic = LongTraffic.standard(days: 10, seed: 7)
        let store = traffic.generate()
        let report = try SpikeDetector().report(
            reader: store, from: LongTraffic.time(day: 4, hour: 9), to: LongTraffic.time(day: 4, hour: 15),
            appID: "com.example.shop")
        let canary = try #require(report.incidents.first { $0.widgetType == "image_text_card" })
        #expect(report.incidents.filter { $0.widgetType == "image_text_card" }.count == 1)
        #expect(canary.onset == LongTraffic.time(day: 4, hour: 11))
        #expect(canary.suspectDeploy?.version == "2026.5-canary")
        // The marker finished at the full rollout, an hour after the canary's first events.
        #expect(canary.suspectDeploy?.lagSeconds == -3600)
        #expect(canary.spikes.contains { $0.appVersion == nil && $0.opening == .newRelease })
        // One incident through the rollout to everyone: the canary's level never became the baseline.
        #expect(canary.end >= LongTraffic.time(day: 4, hour: 13))
    }

    @Test func aFloodThatDipsIsOneIncidentWhenJudgedHourByHourToo() throws {
        // `watch` judges an hour at a time; a long flood must stay one ongoing incident in every pass, with the
        // onset and deploy of its first bucket, even when the pass's window starts in the middle of it.
        let traffic = LongTraffic.standard(days: 10, seed: 11)
        let store = traffic.generate()
        let detector = SpikeDetector()
        var onsets: Set<Timestamp> = []
        for hour in [9, 10, 11] {
            let now = LongTraffic.time(day: 6, hour: hour, minute: 30)
            let report = try detector.report(
                reader: store, from: now.adding(seconds: -3600), to: now, appID: "com.example.lumen")
            let flood = report.incidents.filter { $0.widgetType == "product_grid" && $0.kind == .malformedPayload }
            #expect(flood.count == 1, "\(hour):30: \(flood.map(\.onset))")
            #expect(flood.allSatisfy { $0.isOngoing(at: now, bucketSeconds: 300, gapBuckets: 5) })
            #expect(flood.allSatisfy { $0.suspectDeploy?.version == "2026.7-grid" })
            onsets.formUnion(flood.map(\.onset))
        }
        #expect(onsets == [LongTraffic.time(day: 6, hour: 9)])
    }
}
