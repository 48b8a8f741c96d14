import Foundation
import Kafka
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// docs/reliability.md C3 end to end: a collector whose spool Kafka refuses for good (`TOPIC_AUTHORIZATION_FAILED` on every
/// Produce) moves those records to its dead-letter segment, and `flowmeter spool replay-dead-letters` delivers them
/// once Kafka takes them, while the collector runs; and the real `flowmeter serve`, running as `nobody`, whose
/// spool segments become unreadable (EACCES) during the replay, retries and loses nothing.
@Suite struct SpoolDeadLetterTests {
    /// Posts `count` batches of five events while every broker is down; returns the acknowledged event ids.
    static func spoolBatches(_ fixture: CollectorFixture, prefix: String, count: Int) async throws -> Set<String> {
        var acknowledged: Set<String> = []
        for index in 0..<count {
            let id = "\(prefix)-\(index)"
            let response = try await fixture.post(Batches.good(events: 5, id: id))
            #expect(response.status == 202, "spooled while the brokers are down: \(response.status)")
            if response.status == 202 { acknowledged.formUnion((0..<5).map { "\(id)-\($0)" }) }
        }
        return acknowledged
    }

    @Test func c3RecordsKafkaRefusesForGoodAreDeadLetteredAndTheCLIReplaysThem() async throws {
        let kafka = try KafkaFixture()
        let directory = try TemporaryDirectory(prefix: "flowmeter-c3-dead-letters")
        let spool = directory.file("spool")
        let fixture = try SpoolOutageTests.collector(kafka, spool: directory)
        try kafka.cluster.setBrokerDown(KafkaMockCluster.allBrokers)
        let acknowledged = try await Self.spoolBatches(fixture, prefix: "refused", count: 12)
        #expect(acknowledged.count == 60)
        #expect(fixture.collector.spooledRecords == 12, "one record per batch, all spooled")

        // Kafka refuses every Produce request for good until the operator fixes it (an ACL, say).
        kafka.cluster.pushRequestErrors(
            api: .produce, errors: Array(repeating: .topicAuthorizationFailed, count: 10_000))
        try kafka.cluster.setBrokerUp(KafkaMockCluster.allBrokers)
        let settled = await SpoolChecks.waitUntil(timeout: .seconds(60)) { fixture.collector.spooledRecords == 0 }
        #expect(settled, "every spooled record was settled: delivered or dead-lettered")
        #expect(try await fixture.metric("flowmeter_spool_dead_lettered_records_total") == 12)
        #expect(try await fixture.metric(#"flowmeter_spool_dropped_records_total{reason="undeliverable"}"#) == 0)
        #expect(FileManager.default.fileExists(atPath: spool + "/dead-letters.seg"))
        #expect(fixture.logs.contains { $0.contains("moved to the dead-letter segment") })

        let inspect = try await FlowmeterExecutable.run(["spool", "inspect", "--spool-dir", spool, "--format", "json"])
        #expect(inspect.status == 3, "exit 3: dead letters waiting; \(inspect.errors)")
        #expect(inspect.output.contains(#""deadLetters":12"#), "\(inspect.output)")

        // Refused again: nothing is lost, the records go back into the dead-letter segment.
        let servers = kafka.bootstrapServers.joined(separator: ",")
        let refusedAgain = try await FlowmeterExecutable.run(
            ["spool", "replay-dead-letters", "--spool-dir", spool, "--kafka", servers, "--timeout", "20s"])
        #expect(refusedAgain.status == 1, "\(refusedAgain.output) \(refusedAgain.errors)")
        #expect(refusedAgain.output.contains("replayed 0, kept again 12"), "\(refusedAgain.output)")
        #expect(refusedAgain.errors.contains("TOPIC_AUTHORIZATION_FAILED") || refusedAgain.errors.contains("uthoriz"))

        kafka.cluster.clearRequestErrors(api: .produce)
        let replay = try await FlowmeterExecutable.run(
            ["spool", "replay-dead-letters", "--spool-dir", spool, "--kafka", servers, "--timeout", "20s"])
        #expect(replay.status == 0, "\(replay.output) \(replay.errors)")
        #expect(replay.output.contains("replayed 12, kept again 0"), "\(replay.output)")
        #expect(replay.errors.contains("replayed 12 of 12 dead letters"), "progress: \(replay.errors)")
        let consumed = Set(try await SpoolChecks.consumedIDs(kafka, expecting: acknowledged))
        let missing = acknowledged.subtracting(consumed)
        #expect(missing.isEmpty, "acknowledged ⊆ consumed: \(missing.count) of \(acknowledged.count) missing")
        let left = try FileManager.default.contentsOfDirectory(atPath: spool).filter { $0.hasPrefix("dead-letters") }
        #expect(left.isEmpty, "the replayed dead-letter segments are removed: \(left)")
        await fixture.shutdown()
    }

    /// `UNKNOWN_TOPIC_OR_PARTITION` (what Kafka answers around leader moves) on the replay's Produce requests is
    /// retried: every spooled record arrives, none is dead-lettered.
    @Test func c3UnknownTopicOrPartitionDuringReplayIsRetriedNotDeadLettered() async throws {
        let kafka = try KafkaFixture()
        let directory = try TemporaryDirectory(prefix: "flowmeter-c3-unknown-partition")
        let fixture = try SpoolOutageTests.collector(kafka, spool: directory)
        try kafka.cluster.setBrokerDown(KafkaMockCluster.allBrokers)
        let acknowledged = try await Self.spoolBatches(fixture, prefix: "moved", count: 8)
        kafka.cluster.pushRequestErrors(api: .produce, errors: Array(repeating: .unknownTopicOrPartition, count: 6))
        try kafka.cluster.setBrokerUp(KafkaMockCluster.allBrokers)
        let consumed = Set(try await SpoolChecks.consumedIDs(kafka, expecting: acknowledged))
        let missing = acknowledged.subtracting(consumed)
        #expect(missing.isEmpty, "acknowledged ⊆ consumed: \(missing.count) of \(acknowledged.count) missing")
        #expect(await SpoolChecks.waitUntil(timeout: .seconds(60)) { fixture.collector.spooledRecords == 0 })
        #expect(try await fixture.metric("flowmeter_spool_dead_lettered_records_total") == 0)
        #expect(!FileManager.default.fileExists(atPath: directory.file("spool") + "/dead-letters.seg"))
        await fixture.shutdown()
    }

    /// EACCES needs a user the kernel checks permissions for: the collector runs as `nobody` (`setpriv`), the test
    /// (root) takes read permission from the spool segments the replay has not opened yet, then gives it back.
    @Test(
        .enabled(
            if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"),
            "needs root and setpriv to run the collector as nobody"))
    func c3UnreadableSegmentsAreRetriedWithBackoffAndNothingIsLost() async throws {
        let kafka = try KafkaFixture()
        let directory = try TemporaryDirectory(prefix: "flowmeter-c3-eacces")
        let nobody = try #require(getpwnam("nobody")?.pointee)
        chmod(directory.path, 0o755)
        let spool = directory.file("spool")
        try FileManager.default.createDirectory(atPath: spool, withIntermediateDirectories: false)
        chown(spool, nobody.pw_uid, nobody.pw_gid)
        let keys = try SpoolProcessTests.keysFile(in: directory)
        let salt = directory.file("salt")
        try Data("00112233445566778899aabbccddeeff".utf8).write(to: URL(fileURLWithPath: salt))
        chmod(keys, 0o644)
        chmod(salt, 0o644)
        let executable = try FlowmeterExecutable.requiredPath()
        let server = try await ServerProcess.start("/usr/bin/setpriv", within: .seconds(30)) { port in
            [
                "--reuid=\(nobody.pw_uid)", "--regid=\(nobody.pw_gid)", "--clear-groups", executable, "serve",
                "--listen", "127.0.0.1:\(port)", "--keys", keys, "--kafka",
                kafka.bootstrapServers.joined(separator: ","), "--spool", spool, "--spool-max-bytes", "1MiB",
                "--salt-file", salt, "--shutdown-timeout", "10s", "--rate-limit", "1000000", "--rate-burst",
                "1000000", "--log-level", "warning", "--collector-id", "spool-eacces-test",
            ]
        }
        try kafka.cluster.setBrokerDown(KafkaMockCluster.allBrokers)
        let load = SpoolLoad(name: "eacces", port: server.port)
        // 64 KiB segments (a sixteenth of 1 MiB): wait for several, so that the replay, reading at most a probe's
        // worth while the brokers are down, has not opened the later ones.
        #expect(await eventually { SpoolChecks.segments(in: spool).count >= 5 }, "the spool fills several segments")
        await load.stop()
        let segments = SpoolChecks.segments(in: spool).sorted()
        let locked = Array(segments.dropFirst(3))
        for name in locked { chmod(spool + "/" + name, 0) }

        try kafka.cluster.setBrokerUp(KafkaMockCluster.allBrokers)
        let retried = try await SpoolChecks.waitUntil(timeout: .seconds(60)) {
            let metrics = try await server.get("/metrics").bodyText
            return (SpoolChecks.sample("flowmeter_spool_read_errors_total", in: metrics) ?? 0) >= 2
        }
        #expect(retried, "the replay met EACCES and tried again")
        for name in locked {
            #expect(FileManager.default.fileExists(atPath: spool + "/" + name), "\(name) is kept, never deleted")
        }
        let metrics = try await server.get("/metrics").bodyText
        #expect(SpoolChecks.sample(#"flowmeter_spool_dropped_records_total{reason="corrupt"}"#, in: metrics) == 0)
        #expect(server.child.errors.contains("Permission denied"), "the log names the error")

        for name in locked { chmod(spool + "/" + name, 0o644) }
        let emptied = try await SpoolChecks.waitUntil(timeout: .seconds(60)) {
            try await SpoolProcessTests.spooledRecords(server) == 0
        }
        #expect(emptied, "the replay reads the segments once they are readable again")
        let acknowledged = load.acknowledged
        let consumed = Set(try await SpoolChecks.consumedIDs(kafka, expecting: acknowledged))
        let missing = acknowledged.subtracting(consumed)
        #expect(missing.isEmpty, "acknowledged ⊆ consumed: \(missing.count) of \(acknowledged.count) missing")
        #expect(server.child.terminate(timeout: .seconds(30)) == 0)
    }
}
