import Foundation
import Kafka
import Synchronization
import TestSupport
import Testing

/// Steady ingest load for the spool tests: `workers` threads each post a batch of `events` events with unique ids,
/// pause, and repeat until stopped; every answer's status is counted and every event of a 202 is acknowledged.
///
/// The rate stays low (a few hundred events per second) so that a whole test stays well under the mock cluster's
/// 5 MiB per partition, which it would otherwise drop from the front.
final class SpoolLoad: Sendable {
    private struct State {
        var acknowledged: Set<String> = []
        var statuses: [Int: Int] = [:]
        var failures = 0
        var phase = "before"
        var phaseStatuses: [String: [Int: Int]] = [:]
    }

    let name: String
    private let state = Mutex(State())
    private let isStopped = Atomic<Bool>(false)
    private let running = Atomic<Int>(0)

    /// Starts posting to `port` right away.
    init(
        name: String, port: UInt16, key: String = CollectorFixture.shopKey, workers: Int = 2, events: Int = 5,
        pause: Duration = .milliseconds(50)
    ) {
        self.name = name
        for worker in 0..<workers {
            running.add(1, ordering: .relaxed)
            let thread = Thread { [self] in
                defer { running.subtract(1, ordering: .relaxed) }
                var round = 0
                while !isStopped.load(ordering: .relaxed) {
                    let id = "\(name)-w\(worker)-r\(round)"
                    round += 1
                    post(port: port, key: key, id: id, events: events)
                    Thread.sleep(
                        forTimeInterval: Double(pause.components.seconds) + Double(pause.components.attoseconds) / 1e18)
                }
            }
            thread.name = "spool-load-\(worker)"
            thread.start()
        }
    }

    deinit {
        isStopped.store(true, ordering: .relaxed)
    }

    /// Labels the statuses counted from now on (`before`, `outage`, `after`, …).
    func phase(_ name: String) {
        state.withLock { $0.phase = name }
    }

    /// Stops posting and waits for requests in flight to end (each is bounded by its 15 s read timeout; the wait
    /// by the suite's hang guard).
    func stop() async {
        isStopped.store(true, ordering: .relaxed)
        _ = await eventually(every: .milliseconds(50)) { running.load(ordering: .relaxed) == 0 }
    }

    /// Event ids of every 202.
    var acknowledged: Set<String> { state.withLock { $0.acknowledged } }
    /// Answers by status.
    var statuses: [Int: Int] { state.withLock { $0.statuses } }
    /// Answers by status in one phase.
    func statuses(in phase: String) -> [Int: Int] { state.withLock { $0.phaseStatuses[phase] ?? [:] } }
    /// Requests that got no answer at all.
    var failures: Int { state.withLock { $0.failures } }

    private func post(port: UInt16, key: String, id: String, events: Int) {
        let body = Batches.good(events: events, id: id)
        let headers = [("Authorization", "Bearer \(key)"), ("Content-Type", "application/json")]
        guard let client = try? HTTPTestClient(port: port, readTimeout: .seconds(15)),
            let response = try? client.request("POST", "/v1/diagnostics", headers: headers, body: body)
        else {
            state.withLock { $0.failures += 1 }
            Thread.sleep(forTimeInterval: 0.05)
            return
        }
        client.close()
        state.withLock { state in
            state.statuses[response.status, default: 0] += 1
            state.phaseStatuses[state.phase, default: [:]][response.status, default: 0] += 1
            if response.status == 202 { state.acknowledged.formUnion((0..<events).map { "\(id)-\($0)" }) }
        }
    }
}

/// Helpers the spool tests share.
enum SpoolChecks {
    /// Event ids in the events topic, read from the start until `expected` are all there or `timeout` passed.
    static func consumedIDs(
        _ kafka: KafkaFixture, expecting expected: Set<String>, timeout: Duration = Eventually.hangGuard
    )
        async throws -> [String]
    {
        let messages = try await kafka.consume(topic: KafkaFixture.batchesTopic, timeout: timeout) { messages in
            expected.isSubset(of: Set(messages.flatMap(Self.ids)))
        }
        return messages.flatMap(Self.ids)
    }

    /// The ids of the events of one batch record.
    static func ids(_ message: KafkaConsumerMessage) -> [String] {
        guard let object = try? JSONSerialization.jsonObject(with: Data(message.value)) as? [String: Any],
            let events = object["events"] as? [[String: Any]]
        else { return [] }
        return events.compactMap { $0["id"] as? String }
    }

    /// The value of one sample of `/metrics` text (`name` with its labels as printed), or nil.
    static func sample(_ series: String, in text: String) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.dropFirst(series.count + 1))
        }
        return nil
    }

    /// The events counted by the series rollups among `messages` of the rollups topic, each message id once (as
    /// the sink applies them).
    static func seriesEvents(in messages: [KafkaConsumerMessage]) -> Int {
        var seen: Set<String> = []
        var events = 0
        for message in messages {
            guard let object = try? JSONSerialization.jsonObject(with: Data(message.value)) as? [String: Any],
                let id = object["id"] as? String, object["type"] as? String == "series",
                let rollup = object["rollup"] as? [String: Any], let count = rollup["events"] as? Int,
                seen.insert(id).inserted
            else { continue }
            events += count
        }
        return events
    }

    /// Segment files left in a spool directory.
    static func segments(in directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasSuffix(".seg") }
    }

    /// Polls `read` every 250 ms until it returns true or `timeout` passes (at least the suite's 30 s floor: a
    /// bound here is a hang guard, never a timing claim); returns the last answer.
    static func waitUntil(timeout: Duration, _ read: () async throws -> Bool) async rethrows -> Bool {
        try await eventually(timeout: timeout, every: .milliseconds(250), read)
    }
}
