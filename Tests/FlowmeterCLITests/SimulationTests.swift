import FlowmeterModels
import Foundation
import Testing

@testable import FlowmeterCLI

/// The simulated world on its own: reproducible from the seed, faults only after the deploys that ship them, and
/// a ground truth that says what was planted.
@Suite struct SimulationTests {
    static let end: Int64 = 1_795_950_000
    static func scenario(seed: UInt64 = 7, runID: UInt64 = 1) -> TrafficScenario {
        TrafficScenario(seed: seed, end: end, simulatedSeconds: 4 * 3600, batchCount: 3_000, runID: runID)
    }

    @Test func theSameSeedPlantsTheSameTrafficWhateverTheRun() {
        let first = Self.scenario(runID: 1), second = Self.scenario(runID: 2), other = Self.scenario(seed: 8)
        for index in [0, 1, 1_500, 2_999] {
            var a = first.batch(at: index).batch, b = second.batch(at: index).batch
            #expect(a.id != b.id, "ids are fresh per run, so a second run is not answered as a retry")
            a.id = nil
            b.id = nil
            a.events = a.events.map {
                var event = $0; event.id = nil; return event
            }
            b.events = b.events.map {
                var event = $0; event.id = nil; return event
            }
            #expect(a == b)
        }
        let differs = (0..<20).contains { other.batch(at: $0).batch.client != first.batch(at: $0).batch.client }
        #expect(differs)
    }

    @Test func eachFaultBeginsWithItsDeployAndCarriesItsRelease() throws {
        let scenario = Self.scenario()
        let shipped = try #require(scenario.deploys.first { $0.fault == .ungatedType })
        let typoDeploy = try #require(scenario.deploys.first { $0.fault == .typo })
        let earlier = try #require(scenario.deploys.first { $0.fault == .earlierUngatedType })
        let episode = try #require(scenario.earlierEpisode)
        // The earlier episode ends more than the 48 h of --regression-quiet before the type comes back.
        #expect(scenario.finishedAt(shipped) - episode.upperBound >= 48 * 3600)
        #expect(scenario.finishedAt(earlier) == episode.lowerBound)
        var seen: [String: Int] = [:]
        var fromEpisode = 0
        for index in 0..<scenario.batchCount {
            let batch = scenario.batch(at: index).batch
            for event in batch.events {
                let type = event.widgetType ?? ""
                if episode.contains(event.occurredAt.secondsSinceEpoch) {
                    // Late uploads of the earlier episode: the ungated type, with the release that shipped it then.
                    #expect(type == TrafficScenario.ungatedType)
                    #expect(event.backendRelease == nil || event.backendRelease == earlier.release)
                    fromEpisode += event.count
                    continue
                }
                seen[type, default: 0] += event.count
                #expect(event.occurredAt.secondsSinceEpoch >= scenario.start)
                #expect(event.occurredAt.secondsSinceEpoch <= scenario.end)
                if type == TrafficScenario.ungatedType {
                    #expect(batch.client.appVersion != "5.3.0", "5.3.0 renders it")
                    #expect(event.occurredAt.secondsSinceEpoch >= scenario.finishedAt(shipped))
                    #expect(
                        event.backendRelease == nil || event.backendRelease == shipped.release
                            || scenario.deploys.contains {
                                $0.release == event.backendRelease && $0.fraction > shipped.fraction
                            })
                }
                if type == TrafficScenario.typo {
                    #expect(event.occurredAt.secondsSinceEpoch >= scenario.finishedAt(typoDeploy))
                }
                if type == TrafficScenario.debugOnlyType {
                    #expect(batch.client.buildConfiguration == .debug)
                }
                if type == TrafficScenario.gatedType {
                    #expect(event.kind != .unknownType)
                }
            }
        }
        #expect(seen[TrafficScenario.ungatedType, default: 0] > 1_000)
        #expect(seen[TrafficScenario.typo, default: 0] > 300)
        #expect(seen[TrafficScenario.debugOnlyType, default: 0] > 0)
        #expect(fromEpisode > 100, "the episode is a real ungated type then, not a stray event")
    }

    @Test func theNewVersionRampsUpAndDebugBuildsAreAFewPercent() {
        let scenario = Self.scenario()
        func newShare(_ range: Range<Int>) -> Double {
            let shop = range.map { scenario.batch(at: $0).batch.client }.filter { $0.appID == "com.example.shop" }
            return Double(shop.filter { $0.appVersion == "5.3.0" }.count) / Double(max(shop.count, 1))
        }
        let early = newShare(0..<300), late = newShare(2_700..<3_000)
        #expect(early < 0.15 && late > 0.3, "5.3.0 ramps from \(early) to \(late)")
        let clients = (0..<3_000).map { scenario.batch(at: $0).batch.client }
        let debug = Double(clients.filter { $0.buildConfiguration == .debug }.count) / 3_000
        #expect(debug > 0.01 && debug < 0.06)
        #expect(Set(clients.map(\.appID)).count == 3)
        #expect(clients.filter { $0.appID == "com.example.reader" }.allSatisfy { $0.capabilities == nil })
    }

    @Test func theGroundTruthNamesThePlantedFindingsAndTheirDeploys() throws {
        let truth = GroundTruth(scenario: Self.scenario(), deploysRecorded: true)
        let json = try #require(try JSONSerialization.jsonObject(with: truth.jsonData()) as? [String: Any])
        let ungated = try #require((json["ungated"] as? [[String: Any]])?.first)
        #expect(ungated["widgetType"] as? String == "hologram_projector")
        #expect(ungated["suggestedGate"] as? String == "5.3.0")
        #expect(ungated["affectedVersions"] as? [String] == ["5.1.0", "5.2.0", "5.2.1"])
        let typo = try #require((json["typos"] as? [[String: Any]])?.first)
        #expect(typo["likelyTypoOf"] as? String == "image_text_card")
        let malformed = try #require((json["malformed"] as? [[String: Any]])?.first)
        #expect(malformed["missingKey"] as? String == "imageURL")
        let deploys = try #require(json["deploys"] as? [[String: Any]])
        #expect(
            deploys.compactMap { $0["introduces"] as? String } == [
                "earlierUngatedType", "ungatedType", "typo", "malformedPayload",
            ])
        #expect((ungated["introducedBy"] as? [String: Any])?["version"] as? String == "2026.11.29-2")
        #expect(ungated["status"] as? String == "regressed")
        let regression = try #require((json["regressions"] as? [[String: Any]])?.first)
        #expect((regression["earlierDeploy"] as? [String: Any])?["version"] as? String == "2026.11.27-5")
        let incidents = try #require(json["incidents"] as? [[String: Any]])
        #expect(
            incidents.compactMap { $0["widgetType"] as? String } == [
                "hologram_projector", "imgae_text_card", "image_text_card",
            ])
        let gates = try #require(json["gates"] as? [[String: Any]])
        #expect(
            gates.map { "\($0["widgetType"] ?? "") \($0["minAppVersion"] ?? "")" } == [
                "countdown_timer 5.2.0", "hologram_projector 5.3.0", "story_ring 5.3.0", "video_tile 5.2.1",
                "price_calendar 1.9.0",
            ])
    }

    @Test func aLongSimulationLeavesTheEarlierEpisodeOutRatherThanPastTheMaximumAge() {
        let scenario = TrafficScenario(
            seed: 7, end: Self.end, simulatedSeconds: 40 * 3600, batchCount: 100, runID: 1)
        #expect(scenario.earlierEpisode == nil)
        #expect(!scenario.deploys.contains { $0.fault == .earlierUngatedType })
        #expect(GroundTruth(scenario: scenario, deploysRecorded: true).regressions.isEmpty)
    }
}
