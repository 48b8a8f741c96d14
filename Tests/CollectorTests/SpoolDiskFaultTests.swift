import Collector
import Foundation
import Kafka
import TestSupport
import Testing

/// docs/reliability.md S4 with the spool: a spool that fills up (its `--spool-max-bytes`, or a small tmpfs) and one
/// that becomes read-only. Batches that need it get 503 with Retry-After, never a 202 for what was not written, and
/// `/readyz` says why; when space returns it takes batches again, and everything acknowledged reaches the topic.
@Suite struct SpoolDiskFaultTests {
    /// Posts one batch of five events; returns its status and, for a 202, its event ids.
    static func post(_ fixture: CollectorFixture, _ id: String) async throws -> (status: Int, ids: [String]) {
        let response = try await fixture.post(Batches.good(events: 5, id: id))
        if response.status == 503 { #expect(response.header("Retry-After") != nil) }
        return (response.status, response.status == 202 ? (0..<5).map { "\(id)-\($0)" } : [])
    }

    /// Waits for the spool to be delivered, then checks that every acknowledged event is in the topic.
    static func expectDelivered(_ acknowledged: Set<String>, _ fixture: CollectorFixture, _ kafka: KafkaFixture)
        async throws
    {
        #expect(await SpoolChecks.waitUntil(timeout: .seconds(60)) { fixture.collector.spooledRecords == 0 })
        let consumed = try await SpoolChecks.consumedIDs(kafka, expecting: acknowledged)
        let missing = acknowledged.subtracting(consumed)
        #expect(missing.isEmpty, "acknowledged ⊆ consumed: \(missing.count) of \(acknowledged.count) missing")
    }

    @Test func aFullSpoolAnswers503NeverA202UntilTheReplayFreesRoom() async throws {
        let kafka = try KafkaFixture()
        let directory = try TemporaryDirectory(prefix: "flowmeter-s4-full")
        let fixture = try SpoolOutageTests.collector(kafka, spool: directory, maxBytes: 256 << 10)
        var acknowledged: Set<String> = []
        try kafka.cluster.setBrokerDown(KafkaMockCluster.allBrokers)
        var firstRefusal: Int?
        for index in 0..<400 where firstRefusal == nil {
            let (status, ids) = try await Self.post(fixture, "full-\(index)")
            acknowledged.formUnion(ids)
            #expect(status == 202 || status == 503)
            if status == 503 { firstRefusal = index }
        }
        try #require(firstRefusal != nil, "256 KiB of spool filled up")
        // Full, and nothing leaves while the brokers are down: every batch that needs the spool gets 503.
        for index in 0..<10 {
            let (status, _) = try await Self.post(fixture, "refused-\(index)")
            #expect(status == 503)
        }
        let ready = try await fixture.get("/readyz")
        #expect(ready.status == 503)
        #expect(ready.json["reason"] as? String == "spool_full", "\(ready.bodyText)")
        let metrics = try await fixture.get("/metrics").bodyText
        #expect(SpoolChecks.sample("flowmeter_spool_writable", in: metrics) == 0)
        #expect((SpoolChecks.sample(#"flowmeter_spool_refused_batches_total{reason="full"}"#, in: metrics) ?? 0) > 0)

        try kafka.cluster.setBrokerUp(KafkaMockCluster.allBrokers)
        let recovered = try await SpoolChecks.waitUntil(timeout: .seconds(60)) {
            try await fixture.get("/readyz").status == 200
        }
        #expect(recovered, "ready again once the replay freed room")
        for index in 0..<5 {
            let (status, ids) = try await Self.post(fixture, "after-\(index)")
            #expect(status == 202)
            acknowledged.formUnion(ids)
        }
        try await Self.expectDelivered(acknowledged, fixture, kafka)
        await fixture.shutdown()
    }

    @Test(.enabled(if: Mounts.areAvailable, "needs root to mount a tmpfs and a read-only bind mount"))
    func aReadOnlySpoolAnswers503AndRecoversWhenItIsWritableAgain() async throws {
        let kafka = try KafkaFixture()
        let directory = try TemporaryDirectory(prefix: "flowmeter-s4-ro")
        let spool = directory.file("spool")
        try FileManager.default.createDirectory(atPath: spool, withIntermediateDirectories: true)
        let mount = try Mounts.bind(spool)
        defer { mount.unmount() }
        let fixture = try CollectorFixture(kafka: kafka) { configuration in
            configuration.spool = CollectorConfiguration.DiskSpool(directory: spool)
            configuration.responseDeadline = .seconds(5)
        }
        var acknowledged: Set<String> = []
        let (before, ids) = try await Self.post(fixture, "ro-before")
        #expect(before == 202)
        acknowledged.formUnion(ids)

        try mount.remount(readOnly: true)
        try kafka.cluster.setBrokerDown(KafkaMockCluster.allBrokers)
        for index in 0..<8 {
            let (status, _) = try await Self.post(fixture, "ro-\(index)")
            #expect(status == 503, "nothing can be written, so nothing is acknowledged")
        }
        let ready = try await fixture.get("/readyz")
        #expect(ready.status == 503)
        #expect(ready.json["reason"] as? String == "spool_write_failed", "\(ready.bodyText)")
        #expect((ready.json["message"] as? String ?? "").contains("Read-only file system"), "\(ready.bodyText)")

        try mount.remount(readOnly: false)
        let writable = try await SpoolChecks.waitUntil(timeout: .seconds(20)) {
            try await fixture.get("/readyz").status == 200
        }
        #expect(writable, "ready again once the spool can be written")
        for index in 0..<5 {
            let (status, ids) = try await Self.post(fixture, "rw-\(index)")
            #expect(status == 202, "spooled again while the brokers are still down")
            acknowledged.formUnion(ids)
        }
        try kafka.cluster.setBrokerUp(KafkaMockCluster.allBrokers)
        try await Self.expectDelivered(acknowledged, fixture, kafka)
        await fixture.shutdown()
    }

    @Test(.enabled(if: Mounts.areAvailable, "needs root to mount a tmpfs and a read-only bind mount"))
    func aDiskThatFillsUpAnswers503AndRecoversWhenSpaceReturns() async throws {
        let kafka = try KafkaFixture()
        let directory = try TemporaryDirectory(prefix: "flowmeter-s4-enospc")
        let mountPoint = directory.file("disk")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        let mount = try Mounts.tmpfs(mountPoint, size: "512k")
        defer { mount.unmount() }
        // The spool's own bound is far above the disk: the disk fills first.
        let fixture = try CollectorFixture(kafka: kafka) { configuration in
            configuration.spool = CollectorConfiguration.DiskSpool(directory: mountPoint + "/spool")
            configuration.responseDeadline = .seconds(5)
        }
        var acknowledged: Set<String> = []
        try kafka.cluster.setBrokerDown(KafkaMockCluster.allBrokers)
        var refused = 0
        for index in 0..<600 where refused < 5 {
            let (status, ids) = try await Self.post(fixture, "enospc-\(index)")
            #expect(status == 202 || status == 503)
            acknowledged.formUnion(ids)
            if status == 503 { refused += 1 }
        }
        #expect(refused == 5, "the 512 KiB disk filled up")
        let ready = try await fixture.get("/readyz")
        #expect(ready.status == 503)
        #expect(ready.json["reason"] as? String == "spool_write_failed", "\(ready.bodyText)")
        #expect((ready.json["message"] as? String ?? "").contains("No space left on device"), "\(ready.bodyText)")
        let metrics = try await fixture.get("/metrics").bodyText
        #expect((SpoolChecks.sample("flowmeter_spool_write_errors_total", in: metrics) ?? 0) > 0)

        try mount.resize("64m")
        var accepted = 0
        for index in 0..<40 where accepted < 5 {
            let (status, ids) = try await Self.post(fixture, "roomy-\(index)")
            acknowledged.formUnion(ids)
            if status == 202 { accepted += 1 } else { try await Task.sleep(for: .milliseconds(250)) }
        }
        #expect(accepted == 5, "the spool takes batches again once the disk has room")
        try kafka.cluster.setBrokerUp(KafkaMockCluster.allBrokers)
        try await Self.expectDelivered(acknowledged, fixture, kafka)
        await fixture.shutdown()
    }
}

/// Mounts a test makes and removes: a tmpfs of a given size, or a bind mount it can make read-only. Needs root.
struct Mounts: Sendable {
    let path: String

    /// Whether this process may mount (root, with the capability): tried once on a scratch directory.
    static let areAvailable: Bool = {
        guard getuid() == 0, let directory = try? TemporaryDirectory(prefix: "flowmeter-mount-probe") else {
            return false
        }
        guard (try? Mounts.tmpfs(directory.path, size: "64k")).map({ $0.unmount() }) != nil else { return false }
        return true
    }()

    static func tmpfs(_ path: String, size: String) throws -> Mounts {
        try run(["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", path])
        return Mounts(path: path)
    }

    static func bind(_ path: String) throws -> Mounts {
        try run(["--bind", path, path])
        return Mounts(path: path)
    }

    func remount(readOnly: Bool) throws {
        try Self.run(["-o", "remount,bind,\(readOnly ? "ro" : "rw")", path])
    }

    func resize(_ size: String) throws {
        try Self.run(["-o", "remount,size=\(size)", path])
    }

    func unmount() {
        _ = try? ChildProcess.runBlocking("/bin/umount", [path])
    }

    private static func run(_ arguments: [String]) throws {
        let result = try ChildProcess.runBlocking("/bin/mount", arguments)
        guard result.status == 0 else {
            throw ChildProcess.Failure("mount \(arguments.joined(separator: " ")): \(result.errors)")
        }
    }
}

extension ChildProcess {
    /// Runs a short command to completion (killed after 10 s), blocking the calling thread.
    static func runBlocking(_ path: String, _ arguments: [String]) throws -> (status: Int32, errors: String) {
        let child = try ChildProcess(path, arguments)
        guard let status = child.waitForExit(timeout: .seconds(10)) else {
            child.signal(SIGKILL)
            throw ChildProcess.Failure("\(path) did not finish within 10 s")
        }
        return (status, child.errors)
    }
}
