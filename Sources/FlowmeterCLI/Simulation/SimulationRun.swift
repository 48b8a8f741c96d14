import FlowmeterModels
import Foundation

/// One `flowmeter simulate` run: builds the scenario ending now, sends it, and returns the counters and the ground
/// truth; `flowmeter demo` runs the same against its in-process collector.
struct SimulationRun: Sendable {
    /// What the run did.
    struct Outcome: Sendable {
        var counters: TrafficSimulator.Counters
        var truth: GroundTruth
        var seconds: Double

        /// Prints what was sent and what was planted, in a few lines.
        func printSummary() {
            let requests = truth.requests!
            print(
                "    \(requests.sent) batches in \(String(format: "%.1f", seconds)) s: \(requests.accepted) taken (202), "
                    + "\(requests.clientErrors) refused (4xx), \(requests.serverErrors + requests.transportErrors) "
                    + "failed after retries; \(requests.retries) retries")
            print("    \(requests.eventsAccepted) events accepted, \(requests.eventsDropped) dropped")
            if requests.sent < requests.planned {
                print("    " + Terminal.styled("\(requests.planned - requests.sent) batches not sent in time", .yellow))
            }
            print("    simulated \(truth.from) to \(truth.to); deploys recorded: \(counters.deploysRecorded)")
            for error in counters.deployErrors {
                print("      " + Terminal.styled("deploy not recorded: \(error)", .yellow))
            }
            if let error = counters.firstError {
                print("    first error: " + Terminal.styled(error, .yellow))
            }
        }
    }

    let target: URL
    let ingestKey: String
    let adminKey: String?
    let seed: UInt64
    let duration: Duration
    let simulatedHours: Double
    let maxRequests: Int
    let concurrency: Int
    let showsProgress: Bool
    /// More collectors beside `target`, spread over as a load balancer would (`simulate --target A,B,C`).
    var moreTargets: [URL] = []
    /// The end of the simulated hours, whole seconds since the epoch; nil for now (`flowmeter demo` passes the end
    /// its seeded history was built for).
    var end: Int64?

    func run() async -> Outcome {
        let scenario = TrafficScenario(
            seed: seed, end: end ?? Int64(Date().timeIntervalSince1970), simulatedSeconds: Int64(simulatedHours * 3600),
            batchCount: maxRequests, runID: UInt64.random(in: 0...UInt64.max))
        var simulator = TrafficSimulator(
            scenario: scenario, targets: [target] + moreTargets, ingestKey: ingestKey, adminKey: adminKey,
            duration: duration,
            concurrency: concurrency)
        simulator.showsProgress = showsProgress
        let (counters, seconds) = await simulator.run()
        var truth = GroundTruth(scenario: scenario, deploysRecorded: counters.deploysRecorded == scenario.deploys.count)
        truth.requests = GroundTruth.Requests(
            planned: scenario.batchCount, sent: counters.sent, accepted: counters.accepted,
            clientErrors: counters.clientErrors, serverErrors: counters.serverErrors,
            transportErrors: counters.transportErrors, retries: counters.retries,
            eventsAccepted: counters.eventsAccepted, eventsDropped: counters.eventsDropped,
            occurrencesAccepted: counters.occurrencesAccepted, occurrencesByKind: counters.occurrencesByKind,
            occurrencesUncertain: counters.occurrencesUncertain,
            wallSeconds: (seconds * 10).rounded() / 10)
        return Outcome(counters: counters, truth: truth, seconds: seconds)
    }
}
