import Foundation
import Kafka
import Synchronization
import Testing
import TestSupport

/// RELIABILITY.md K9: the real `flowmeter serve` under load, then SIGTERM: exit 0 and every 202 is in the topic.
@Suite struct ServeProcessTests {
    /// The `flowmeter` executable built next to the test bundle, or nil.
    static var executable: URL? {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("flowmeter"),
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("flowmeter"),
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    @Test func sigtermUnderLoadExitsZeroAndLosesNoAcknowledgedEvent() async throws {
        guard let executable = Self.executable else {
            print("ServeProcessTests: skipped: no flowmeter executable next to the test bundle (build it first)")
            return
        }
        let kafka = try KafkaFixture()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("flowmeter-serve-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let keys = directory.appendingPathComponent("keys.json")
        try Data(#"{"ingestKeys":[{"key":"\#(CollectorFixture.shopKey)","apps":["*"]}]}"#.utf8).write(to: keys)
        let port = UInt16.random(in: 20_000...40_000)

        let process = Process()
        process.executableURL = executable
        process.arguments = [
            "serve", "--listen", "127.0.0.1:\(port)", "--keys", keys.path,
            "--kafka", kafka.bootstrapServers.joined(separator: ","), "--salt", "00112233445566778899aabbccddeeff",
            "--response-deadline", "3s", "--shutdown-timeout", "10s", "--rate-limit", "1000000", "--rate-burst", "1000000",
        ]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { process.terminate() } }

        // Wait (bounded) for the port to answer.
        var isUp = false
        for _ in 0..<100 where !isUp {
            if let client = try? HTTPTestClient(port: port), (try? client.request("GET", "/healthz").status) == 200 {
                isUp = true
            } else {
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        try #require(isUp, "flowmeter serve did not come up")

        let tally = LoadTally()
        let workers = (0..<4).map { worker in
            Task.detached {
                try await HTTPTestClient.onThread {
                    for round in 0..<200 {
                        let id = "w\(worker)-r\(round)"
                        guard let client = try? HTTPTestClient(port: port, readTimeout: .seconds(10)) else { return }
                        defer { client.close() }
                        tally.sent()
                        guard let response = try? client.request(
                            "POST", "/v1/diagnostics",
                            headers: [("Authorization", "Bearer \(CollectorFixture.shopKey)"),
                                      ("Content-Type", "application/json")],
                            body: Batches.good(events: 5, id: id))
                        else { return }
                        if response.status == 202 {
                            tally.acknowledge((0..<5).map { "\(id)-\($0)" })
                        }
                    }
                }
            }
        }
        try await Task.sleep(for: .seconds(2))
        kill(process.processIdentifier, SIGTERM)
        for worker in workers { try? await worker.value }

        let deadline = ContinuousClock.now + .seconds(35)
        while process.isRunning && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        try #require(!process.isRunning, "flowmeter serve did not exit within 35 s of SIGTERM")
        #expect(process.terminationStatus == 0)
        let expected = tally.acknowledged
        #expect(!expected.isEmpty)

        let messages = try await kafka.consume(topic: KafkaFixture.eventsTopic, timeout: .seconds(20)) { messages in
            messages.count >= expected.count
        }
        let ids = Set(messages.compactMap { try? JSONDecoder().decode(EventRecordProbe.self, from: Data($0.value)).id })
        #expect(expected.isSubset(of: ids), "acknowledged ⊆ consumed: \(expected.subtracting(ids).count) missing")
        let log = String(decoding: errors.fileHandleForReading.availableData, as: UTF8.self)
        #expect(log.contains("\"stopped\""))
        print("ServeProcessTests: \(tally.requests) requests, \(expected.count) events acknowledged, \(messages.count) consumed")
    }
}

/// What the load workers saw, shared between their threads.
final class LoadTally: Sendable {
    private let state = Mutex<(requests: Int, acknowledged: Set<String>)>((0, []))

    func sent() {
        state.withLock { $0.requests += 1 }
    }

    func acknowledge(_ ids: [String]) {
        state.withLock { $0.acknowledged.formUnion(ids) }
    }

    var requests: Int { state.withLock { $0.requests } }
    var acknowledged: Set<String> { state.withLock { $0.acknowledged } }
}
