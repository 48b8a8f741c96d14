import Foundation
import Kafka
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The real `flowmeter serve` binary with a spool through a broker outage: killed with SIGKILL mid-outage and
/// restarted on the same spool (which comes up with every broker still down), and docs/reliability.md K9, SIGTERM under
/// load with the brokers down. In both, every acknowledged event is in the topic after recovery.
@Suite struct SpoolProcessTests {
    static func serve(_ kafka: KafkaFixture, spool: String, keys: String) async throws -> ServerProcess {
        try await FlowmeterExecutable.serve(
            [
                "--keys", keys, "--kafka", kafka.bootstrapServers.joined(separator: ","), "--spool", spool, "--salt",
                "00112233445566778899aabbccddeeff", "--shutdown-timeout", "10s", "--rate-limit", "1000000",
                "--rate-burst", "1000000", "--log-level", "warning", "--collector-id", "spool-process-test",
            ], within: .seconds(30))
    }

    static func keysFile(in directory: TemporaryDirectory) throws -> String {
        let path = directory.file("keys.json")
        try Data(#"{"ingestKeys":[{"key":"\#(CollectorFixture.shopKey)","apps":["*"]}]}"#.utf8)
            .write(to: URL(fileURLWithPath: path))
        return path
    }

    static func spooledRecords(_ server: ServerProcess) async throws -> Double {
        SpoolChecks.sample("flowmeter_spool_records", in: try await server.get("/metrics").bodyText) ?? -1
    }

    @Test func killedMidOutageAndRestartedOnTheSameSpoolItLosesNoAcknowledgedEvent() async throws {
        let kafka = try KafkaFixture()
        let directory = try TemporaryDirectory(prefix: "flowmeter-kill")
        let keys = try Self.keysFile(in: directory)
        let spool = directory.file("spool")
        let first = try await Self.serve(kafka, spool: spool, keys: keys)
        let before = SpoolLoad(name: "kill-first", port: first.port)
        #expect(await eventually { before.acknowledged.count >= 100 }, "the load is acknowledged before the outage")
        try kafka.cluster.setBrokerDown(KafkaMockCluster.allBrokers)
        let spooling = try await SpoolChecks.waitUntil(timeout: .seconds(20)) {
            try await Self.spooledRecords(first) > 200
        }
        #expect(spooling, "the spool fills while every broker is down")
        first.child.signal(SIGKILL)
        #expect(await first.child.exited(within: .seconds(10)) == SIGKILL)
        await before.stop()
        #expect(!SpoolChecks.segments(in: spool).isEmpty)

        // Every broker is still down: the new collector comes up, answers from the spool, and replays later.
        let second = try await Self.serve(kafka, spool: spool, keys: keys)
        let ready = try await second.get("/readyz")
        #expect(ready.status == 200, "\(ready.bodyText)")
        let after = SpoolLoad(name: "kill-second", port: second.port)
        // Answered from the spool while every broker is still down, then on after they are back.
        #expect(await eventually { after.statuses[202, default: 0] >= 20 }, "answers from the spool: \(after.statuses)")
        try kafka.cluster.setBrokerUp(KafkaMockCluster.allBrokers)
        let answeredBeforeRecovery = after.statuses[202, default: 0]
        #expect(await eventually { after.statuses[202, default: 0] >= answeredBeforeRecovery + 20 })
        await after.stop()
        print("kill -9: first \(before.statuses), second \(after.statuses)")
        #expect(after.statuses.keys.allSatisfy { $0 == 202 }, "\(after.statuses)")
        #expect(after.statuses[202, default: 0] > 0)

        let emptied = try await SpoolChecks.waitUntil(timeout: .seconds(60)) {
            try await Self.spooledRecords(second) == 0
        }
        #expect(emptied, "the restarted collector replays the spool once the brokers are back")
        let acknowledged = before.acknowledged.union(after.acknowledged)
        let consumed = try await SpoolChecks.consumedIDs(kafka, expecting: acknowledged)
        let missing = acknowledged.subtracting(consumed)
        #expect(missing.isEmpty, "acknowledged ⊆ consumed: \(missing.count) of \(acknowledged.count) missing")
        print("kill -9: \(acknowledged.count) acknowledged, \(consumed.count) consumed")
        #expect(second.child.terminate(timeout: .seconds(30)) == 0)
    }

    @Test func k9SigtermUnderLoadWithTheBrokersDownExitsWithinTheBoundAndTheNextStartReplays() async throws {
        let kafka = try KafkaFixture()
        let directory = try TemporaryDirectory(prefix: "flowmeter-k9")
        let keys = try Self.keysFile(in: directory)
        let spool = directory.file("spool")
        let first = try await Self.serve(kafka, spool: spool, keys: keys)
        let load = SpoolLoad(name: "k9", port: first.port, workers: 3)
        #expect(await eventually { load.acknowledged.count >= 100 }, "the load is acknowledged before the outage")
        try kafka.cluster.setBrokerDown(KafkaMockCluster.allBrokers)
        // SIGTERM while the load goes on into the spool.
        #expect(try await eventually { try await Self.spooledRecords(first) > 100 }, "the spool fills in the outage")
        first.child.signal(SIGTERM)
        // docs/reliability.md K9: exit within 35 s; with every broker down nothing is flushed, the spool has it all.
        let status = await first.child.exited(within: .seconds(35))
        await load.stop()
        try #require(status != nil, "flowmeter serve did not exit within 35 s of SIGTERM")
        #expect(status == 0)
        print("K9: statuses \(load.statuses)")
        #expect(load.statuses[202, default: 0] > 0)
        #expect(!SpoolChecks.segments(in: spool).isEmpty, "what Kafka did not take is in the spool")

        try kafka.cluster.setBrokerUp(KafkaMockCluster.allBrokers)
        let second = try await Self.serve(kafka, spool: spool, keys: keys)
        let emptied = try await SpoolChecks.waitUntil(timeout: .seconds(60)) {
            try await Self.spooledRecords(second) == 0
        }
        #expect(emptied, "the next start replays the spool")
        let acknowledged = load.acknowledged
        let consumed = try await SpoolChecks.consumedIDs(kafka, expecting: acknowledged)
        let missing = acknowledged.subtracting(consumed)
        #expect(missing.isEmpty, "acknowledged ⊆ consumed: \(missing.count) of \(acknowledged.count) missing")
        print("K9: \(acknowledged.count) acknowledged, \(consumed.count) consumed")
        #expect(second.child.terminate(timeout: .seconds(30)) == 0)
    }
}
