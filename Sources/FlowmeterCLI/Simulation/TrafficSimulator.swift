import FlowmeterModels
import Foundation
import Gzip
import Reporter
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sends a `TrafficScenario` to running collectors: batches paced over `duration` of wall time by `concurrency`
/// senders, deploy markers as the simulated clock passes them, progress on the terminal.
///
/// With several targets it is the load balancer in front of them: batch `i` goes to target `i % count`, and each
/// retry of it to the next target, as a balancer moves a client off a collector that stopped answering.
///
/// Bounded twice: it sends at most the scenario's batches, and stops taking new ones at twice `duration` plus
/// ten seconds even if some remain (they are reported as unsent). Retriable answers (503, 429, no answer) are
/// retried with the same batch id, as an app does.
struct TrafficSimulator: Sendable {
    /// What a run sent and how the collector answered; every batch counts once, by its final answer.
    struct Counters: Sendable {
        var sent = 0
        var accepted = 0
        var clientErrors = 0
        var serverErrors = 0
        var transportErrors = 0
        var retries = 0
        var eventsAccepted = 0
        var eventsDropped = 0
        /// The `count`s of the events of batches answered 202 with nothing dropped, in all and per kind: what a
        /// store fed by the collectors must hold.
        var occurrencesAccepted = 0
        var occurrencesByKind: [String: Int] = [:]
        /// Batches answered 202 with some event dropped (their accepted occurrences are not known here).
        var batchesWithDrops = 0
        var deploysRecorded = 0
        var deployErrors: [String] = []
        var firstError: String?
    }

    let scenario: TrafficScenario
    /// The collectors, at least one; deploy markers go to the first.
    let targets: [URL]
    let ingestKey: String
    let adminKey: String?
    let duration: Duration
    let concurrency: Int
    /// Whether to draw the progress bar (off in tests that read the output).
    var showsProgress = true

    /// Runs the simulation; returns the counters and the wall time it took.
    func run() async -> (counters: Counters, seconds: Double) {
        let tally = Tally()
        let clock = ContinuousClock()
        let started = clock.now
        let hardStop = started + duration * 2 + .seconds(10)
        let plain = targets.map { DiagnosticsReporter(baseURL: $0, ingestKey: ingestKey) }
        let gzip = targets.map { DiagnosticsReporter(baseURL: $0, ingestKey: ingestKey, gzip: { Gzip.compress($0) }) }
        let total = scenario.batchCount

        let progress = Task {
            guard showsProgress else { return }
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(250))
                let snapshot = tally.counters.withLock { $0 }
                Terminal.progress(label(snapshot, since: started), done: min(snapshot.sent, total - 1), of: total)
            }
        }
        await withTaskGroup(of: Void.self) { group in
            if let adminKey {
                group.addTask { await postDeploys(adminKey: adminKey, started: started, into: tally) }
            }
            for _ in 0..<max(1, concurrency) {
                group.addTask {
                    while true {
                        let index = tally.nextIndex.withLock { value -> Int in
                            defer { value += 1 }
                            return value
                        }
                        guard index < total, clock.now < hardStop else { return }
                        let due = started + duration * (Double(index) / Double(total))
                        if due > clock.now { try? await Task.sleep(until: due, clock: clock) }
                        let planned = scenario.batch(at: index)
                        await send(planned, index: index, with: planned.usesGzip ? gzip : plain, into: tally)
                    }
                }
            }
        }
        progress.cancel()
        _ = await progress.value
        let final = tally.counters.withLock { $0 }
        if showsProgress {
            Terminal.progress(label(final, since: started), done: total, of: total)
        }
        let elapsed = clock.now - started
        return (final, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }

    private func label(_ counters: Counters, since started: ContinuousClock.Instant) -> String {
        let elapsed = ContinuousClock.now - started
        let seconds = max(0.001, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        let rate = Int((Double(counters.sent) / seconds).rounded())
        let failed = counters.serverErrors + counters.transportErrors
        return "\(rate)/s 202:\(counters.accepted) 4xx:\(counters.clientErrors) 5xx:\(failed)"
    }

    /// Sends one batch, retrying retriable answers up to four more times with the same id and `sentAt` refreshed.
    private func send(
        _ planned: TrafficScenario.PlannedBatch, index: Int, with reporters: [DiagnosticsReporter], into tally: Tally
    ) async {
        var batch = planned.batch
        var backoff = 0.2
        for attempt in 1...5 {
            // sentAt is the real clock, so the collector's skew correction leaves the simulated occurredAt alone.
            batch.sentAt = Timestamp(Date())
            let body: [UInt8]
            do {
                body = Array(try JSONEncoder().encode(batch))
            } catch {
                tally.counters.withLock { $0.firstError = $0.firstError ?? "encoding: \(error)" }
                return
            }
            do {
                let answer = try await reporters[(index + attempt - 1) % reporters.count].send(body: body)
                tally.counters.withLock {
                    $0.sent += 1
                    $0.accepted += 1
                    $0.eventsAccepted += answer.accepted
                    $0.eventsDropped += answer.dropped
                    if answer.dropped == 0 {
                        for event in batch.events {
                            $0.occurrencesAccepted += event.count
                            $0.occurrencesByKind[event.kind.rawValue, default: 0] += event.count
                        }
                    } else {
                        $0.batchesWithDrops += 1
                    }
                }
                return
            } catch {
                let isLast = attempt == 5 || !error.isRetriable
                tally.counters.withLock {
                    if isLast {
                        $0.sent += 1
                        switch error.status {
                        case .some(let status) where (400..<500).contains(status): $0.clientErrors += 1
                        case .some: $0.serverErrors += 1
                        case .none: $0.transportErrors += 1
                        }
                        $0.firstError = $0.firstError ?? error.description
                    } else {
                        $0.retries += 1
                    }
                }
                if isLast { return }
                try? await Task.sleep(for: .milliseconds(Int((error.retryAfterSeconds ?? backoff) * 1000)))
                backoff *= 2
            }
        }
    }

    /// A short commit hash that is the same for the same release in every run.
    static func commit(of release: String) -> String {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in release.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3
        }
        let hex = String(hash, radix: 16)
        return String((String(repeating: "0", count: 16 - hex.count) + hex).prefix(7))
    }

    /// Posts each deploy marker once the pacing clock reaches its simulated time.
    private func postDeploys(
        adminKey: String, started: ContinuousClock.Instant, into tally: Tally
    ) async {
        let session = URLSession(configuration: .ephemeral)
        for deploy in scenario.deploys {
            let due = started + duration * deploy.fraction
            if due > .now { try? await Task.sleep(until: due, clock: .continuous) }
            let finished = scenario.finishedAt(deploy)
            let body: [String: String] = [
                "service": deploy.service, "version": deploy.version, "environment": "production",
                "startedAt": Timestamp(secondsSinceEpoch: finished - 240).rfc3339String,
                "finishedAt": Timestamp(secondsSinceEpoch: finished).rfc3339String,
                "commit": Self.commit(of: deploy.release),
            ]
            var request = URLRequest(url: targets[0].appendingPathComponent("v1/deploys"))
            request.httpMethod = "POST"
            request.setValue("Bearer \(adminKey)", forHTTPHeaderField: "Authorization")
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])
            let status = (try? await session.data(for: request)).flatMap { ($0.1 as? HTTPURLResponse)?.statusCode }
            tally.counters.withLock {
                if status == 201 {
                    $0.deploysRecorded += 1
                } else {
                    $0.deployErrors.append("\(deploy.release): \(status.map { "HTTP \($0)" } ?? "no answer")")
                }
            }
        }
    }
}

/// The counters and the next batch index, shared by the senders of one run.
private final class Tally: Sendable {
    let counters = Mutex(TrafficSimulator.Counters())
    let nextIndex = Mutex(0)
}
