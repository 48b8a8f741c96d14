import Detector
import DetectorBenchmarks
import FlowmeterModels
import Foundation

/// `flowmeter-bench detector [--days N] [--seeds N] [--first-seed S] [--verbose]`: the spike detector over weeks of
/// seeded synthetic traffic (``LongTraffic/standard(days:seed:)``: three small apps and a large one, a daily rhythm,
/// a version rollout, over-dispersed background, debug noise, and issue 39's planted causes), one scenario per seed.
///
/// Prints, per seed, each plant's outcome (found once with its deploy, split, misattributed, missed; for the 40%
/// rise, whether it stayed quiet) and the incidents nobody planted; then the totals: false incidents per app per
/// week, and the detection delay per plant (from its start to the end of the incident's opening bucket).
enum DetectorBenchmark {
    static func run(_ arguments: [String]) -> Int32 {
        var days = 28
        var seeds = 5
        var firstSeed: UInt64 = 1
        var verbose = false
        var index = 0
        while index < arguments.count {
            let value = index + 1 < arguments.count ? arguments[index + 1] : ""
            switch arguments[index] {
            case "--days": days = Int(value) ?? 0
            case "--seeds": seeds = Int(value) ?? 0
            case "--first-seed": firstSeed = UInt64(value) ?? 1
            case "--verbose":
                verbose = true
                index -= 1
            default:
                print(
                    "usage: flowmeter-bench detector [--days N (28, at least 10)] [--seeds N (5)] [--first-seed S (1)] [--verbose]"
                )
                return 2
            }
            index += 2
        }
        guard days >= 10, seeds > 0 else {
            print("error: --days must be at least 10 and --seeds positive")
            return 2
        }
        print("detector: \(seeds) seed(s) from \(firstSeed), \(days) days each (day 0 is history), 4 apps")
        var falseIncidents = 0
        var appDays = 0.0
        var wrong = 0
        var delays: [String: [Int64]] = [:]
        var plantNames: [String] = []
        let started = Date()
        for seed in firstSeed..<(firstSeed + UInt64(seeds)) {
            let traffic = LongTraffic.standard(days: days, seed: seed)
            let score: DetectorScore
            do {
                score = try DetectorScore.measure(traffic)
            } catch {
                print("error: \(error)")
                return 1
            }
            falseIncidents += score.falseIncidents.count
            appDays += score.appDays
            print("seed \(seed): \(score.falseIncidents.count) false incident(s)")
            for result in score.plants {
                if !plantNames.contains(result.plant.name) { plantNames.append(result.plant.name) }
                if !result.isCorrect { wrong += 1 }
                if let delay = result.delaySeconds, result.plant.isIncident {
                    delays[result.plant.name, default: []].append(delay)
                }
                let found = result.incidents.map { incident in
                    let deploy = incident.suspectDeploy.map { "\($0.service)@\($0.version)" } ?? "no deploy"
                    return "\(incident.onset.rfc3339String) \(deploy) peak \(incident.count)/\(incident.baseline)"
                }
                print(
                    "  \(result.isCorrect ? "ok  " : "FAIL") \(result.plant.name): \(result.incidents.count) incident(s)"
                        + (found.isEmpty ? "" : " [\(found.joined(separator: "; "))]"))
            }
            if verbose {
                for incident in score.falseIncidents {
                    print(
                        "  false: \(incident.appID) \(incident.kind.rawValue) \(incident.widgetType) "
                            + "\(incident.onset.rfc3339String) count \(incident.count) baseline \(incident.baseline) "
                            + "versions \(incident.versions.map(\.appVersion))")
                }
            }
        }
        let weeks = appDays / 7
        print("")
        print(
            String(
                format: "false incidents: %d in %.1f app-weeks = %.3f per app per week (%.2f per app per 30 days)",
                falseIncidents, weeks, Double(falseIncidents) / weeks, Double(falseIncidents) / appDays * 30))
        print("planted causes not found once with their deploy (or a rise reported): \(wrong)")
        print("detection delay, plant start to the end of the opening bucket (median / max over seeds):")
        for name in plantNames {
            guard let values = delays[name]?.sorted(), !values.isEmpty else { continue }
            print("  \(name): \(values[values.count / 2] / 60) min / \(values[values.count - 1] / 60) min")
        }
        print(String(format: "time: %.1f s", Date().timeIntervalSince(started)))
        return wrong == 0 ? 0 : 1
    }
}
