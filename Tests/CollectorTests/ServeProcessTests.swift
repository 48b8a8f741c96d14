import Foundation
import Kafka
import Synchronization
import TestSupport
import Testing

/// docs/reliability.md K9: the real `flowmeter serve` under load, then SIGTERM: exit 0 and every 202 is in the topic.
@Suite struct ServeProcessTests {
    @Test func sigtermUnderLoadExitsZeroAndLosesNoAcknowledgedEvent() async throws {
        // make test builds it before the tests: a missing binary fails here rather than passing unchecked.
        _ = try FlowmeterExecutable.requiredPath()
        let kafka = try KafkaFixture()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("flowmeter-serve-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let keys = directory.appendingPathComponent("keys.json")
        try Data(#"{"ingestKeys":[{"key":"\#(CollectorFixture.shopKey)","apps":["*"]}]}"#.utf8).write(to: keys)
        let serve = try await FlowmeterExecutable.serve(
            [
                "--keys", keys.path, "--kafka", kafka.bootstrapServers.joined(separator: ","), "--salt",
                "00112233445566778899aabbccddeeff", "--response-deadline", "3s", "--shutdown-timeout", "10s",
                "--rate-limit", "1000000", "--rate-burst", "1000000",
            ], within: .seconds(30))
        defer { serve.child.terminate(timeout: .zero) }
        let port = serve.port

        let tally = LoadTally()
        let workers = (0..<4).map { worker in
            Task.detached {
                try await HTTPTestClient.onThread {
                    for round in 0..<200 {
                        let id = "w\(worker)-r\(round)"
                        guard let client = try? HTTPTestClient(port: port, readTimeout: .seconds(10)) else { return }
                        defer { client.close() }
                        tally.sent()
                        guard
                            let response = try? client.request(
                                "POST", "/v1/diagnostics",
                                headers: [
                                    ("Authorization", "Bearer \(CollectorFixture.shopKey)"),
                                    ("Content-Type", "application/json"),
                                ],
                                body: Batches.good(events: 5, id: id))
                        else { return }
                        if response.status == 202 {
                            tally.acknowledge((0..<5).map { "\(id)-\($0)" })
                        }
                    }
                }
            }
        }
        // SIGTERM under load: once a hundred batches are acknowledged, however long that takes on a busy machine.
        #expect(await eventually { tally.acknowledged.count >= 500 })
        serve.child.signal(SIGTERM)
        for worker in workers { try? await worker.value }

        let status = await serve.child.exited(within: .seconds(35))
        try #require(status != nil, "flowmeter serve did not exit within 35 s of SIGTERM")
        #expect(status == 0)
        let expected = tally.acknowledged
        #expect(!expected.isEmpty)

        let messages = try await kafka.consume(topic: KafkaFixture.batchesTopic) { messages in
            messages.count >= expected.count
        }
        let ids = Set(messages.flatMap(SpoolChecks.ids))
        #expect(expected.isSubset(of: ids), "acknowledged ⊆ consumed: \(expected.subtracting(ids).count) missing")
        let log = serve.child.errors
        #expect(log.contains("\"stopped\""))
        print(
            "ServeProcessTests: \(tally.requests) requests, \(expected.count) events acknowledged, \(messages.count) consumed"
        )
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
