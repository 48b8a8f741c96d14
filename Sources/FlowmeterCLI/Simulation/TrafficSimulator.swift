import FlowmeterModels
import FlowmeterReporter
import Foundation
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sends a `TrafficScenario` to a running collector through the client SDK: batches paced over `duration` of wall
/// time by `concurrency` senders, deploy markers as the simulated clock passes them, progress on the terminal.
///
/// Each planned batch is one app install's `FlowmeterReporter` on a queue directory of its sender: the events are
/// recorded, the decodes counted, and a flush sends the sealed batch, so every run exercises the SDK's disk queue,
/// gzip, ids and answer handling (`Retry-After`, backoff) end to end. Bounded twice: it sends at most the
/// scenario's batches, and stops taking new ones at twice `duration` plus ten seconds even if some remain (they are
/// reported as unsent); each flush waits at most until then too.
///
/// With several targets it is the load balancer in front of them: batch `i` goes to target `i % count` (the SDK
/// retries a collector that is restarting until it answers again).
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
        /// The `count`s of the events of planned batches whose flush delivered them (and everything queued before
        /// them), in all and per kind: what a store fed by the collectors must hold.
        var occurrencesAccepted = 0
        var occurrencesByKind: [String: Int] = [:]
        /// Occurrences of planned batches whose flush did not end delivered and that no later flush of the same queue
        /// vouched for: some may have arrived, some not.
        var occurrencesUncertain = 0
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
        let total = scenario.batchCount
        let queues = NSTemporaryDirectory() + "flowmeter-simulate-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: queues) }
        // One connection pool for the whole fleet, as one app process would have, instead of a session per install.
        let transport = URLSessionTransport(timeout: 10, maximumConnectionsPerHost: max(1, concurrency))

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
            for sender in 0..<max(1, concurrency) {
                group.addTask {
                    let directory = URL(fileURLWithPath: queues).appendingPathComponent("sender-\(sender)")
                    while true {
                        let index = tally.nextIndex.withLock { value -> Int in
                            defer { value += 1 }
                            return value
                        }
                        guard index < total, clock.now < hardStop else { return }
                        let due = started + duration * (Double(index) / Double(total))
                        if due > clock.now { try? await Task.sleep(until: due, clock: clock) }
                        let remaining = hardStop - clock.now
                        let seconds = min(30, Double(remaining.components.seconds))
                        await send(
                            scenario.batch(at: index), to: targets[index % targets.count], from: directory,
                            sender: sender, within: seconds, transport: transport, into: tally)
                    }
                }
            }
        }
        progress.cancel()
        _ = await progress.value
        let final = tally.finish()
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

    /// Sends one planned batch as its install's app would: a reporter on `directory` records the events and the
    /// decodes, then flushes (at most `seconds`) to `target`; batches an earlier flush left there go out first.
    private func send(
        _ planned: TrafficScenario.PlannedBatch, to target: URL, from directory: URL, sender: Int,
        within seconds: Double, transport: URLSessionTransport, into tally: Tally
    ) async {
        let batch = planned.batch
        var configuration = ReporterConfiguration(
            endpoint: target, ingestKey: ingestKey, client: batch.client, directory: directory)
        configuration.uploads.usesGzip = planned.usesGzip
        configuration.transport = transport
        configuration.conditions = .always
        configuration.observesAppLifecycle = false
        configuration.onUpload = { attempt in tally.count(attempt) }
        let reporter: FlowmeterReporter
        do {
            reporter = try FlowmeterReporter(configuration: configuration)
        } catch {
            tally.counters.withLock { $0.firstError = $0.firstError ?? "queue directory: \(error)" }
            return
        }
        for event in batch.events { reporter.record(event) }
        reporter.recordDecodes(batch.decodes ?? 0)
        let outcome = await reporter.flush(timeoutInterval: max(1, seconds))
        await reporter.close()
        tally.settle(batch.events, sender: sender, isDelivered: outcome == .delivered)
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
///
/// A batch counts once, by its final answer: 202, or a refusal (4xx). One still queued when the run ends counts by
/// its last answer (5xx, or none) as failed after retries.
private final class Tally: Sendable {
    let counters = Mutex(TrafficSimulator.Counters())
    let nextIndex = Mutex(0)
    /// The last status of each batch not finished yet (nil: no answer).
    private let unfinished = Mutex<[String: Int?]>([:])
    /// Per sender's queue, the occurrences of planned batches no flush has vouched for yet.
    private let unsettled = Mutex<[Int: (total: Int, byKind: [String: Int])]>([:])

    /// Counts a planned batch's occurrences: accepted once a flush of its sender's queue ended delivered (that
    /// flush sent everything queued before it too), else held until one does.
    func settle(_ events: [DiagnosticEvent], sender: Int, isDelivered: Bool) {
        let vouched = unsettled.withLock { open -> (total: Int, byKind: [String: Int])? in
            var held = open[sender] ?? (0, [:])
            for event in events {
                held.total += event.count
                held.byKind[event.kind.rawValue, default: 0] += event.count
            }
            open[sender] = isDelivered ? nil : held
            return isDelivered ? held : nil
        }
        guard let vouched else { return }
        counters.withLock { counters in
            counters.occurrencesAccepted += vouched.total
            counters.occurrencesByKind.merge(vouched.byKind, uniquingKeysWith: +)
        }
    }

    func count(_ attempt: UploadAttempt) {
        let isFinal: Bool
        switch attempt.result {
        case .delivered, .dropped, .paused: isFinal = true
        case .retry, .split: isFinal = false
        }
        unfinished.withLock { open in
            if isFinal {
                open[attempt.batchID] = nil
            } else {
                open[attempt.batchID] = .some(attempt.status)
            }
        }
        counters.withLock { counters in
            switch attempt.result {
            case .delivered(let accepted, let dropped):
                counters.sent += 1
                counters.accepted += 1
                counters.eventsAccepted += accepted
                counters.eventsDropped += dropped
            case .dropped, .paused:
                counters.sent += 1
                counters.clientErrors += 1
            case .retry, .split:
                counters.retries += 1
            }
            if attempt.status != 202 {
                counters.firstError =
                    counters.firstError ?? attempt.status.map { "HTTP \($0) (\(attempt.result))" } ?? "no answer"
            }
        }
    }

    /// The counters, with the batches still queued counted by their last answer.
    func finish() -> TrafficSimulator.Counters {
        let left = unfinished.withLock { $0 }
        let uncertain = unsettled.withLock { $0.values.reduce(0) { $0 + $1.total } }
        return counters.withLock { counters in
            counters.occurrencesUncertain = uncertain
            for status in left.values {
                counters.sent += 1
                if status == nil { counters.transportErrors += 1 } else { counters.serverErrors += 1 }
            }
            return counters
        }
    }
}
