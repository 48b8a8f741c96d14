import FlowmeterModels
import Foundation
import Kafka
import RollupStore
import Rollups
import Sink
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// docs/reliability.md, C2: a store that fails as a whole is not a bad message. While PostgreSQL is read-only after a
/// failover, refuses the sink's user, or the dead-letter file cannot be written, the sink dead-letters nothing, moves
/// no offset, says why in ``RollupSink/stall``, and resumes by itself once the store is back. And C5's PostgreSQL
/// half: a server that stops answering surfaces as an error within the client's timeout, and the sink recovers when
/// it answers again.
///
/// Each PostgreSQL test runs its own throwaway cluster, since it changes server-wide settings or stops the server.
@Suite(.serialized) struct StoreWideFailureTests {
    @Test
    func c2ReadOnlyFailoverStallsTheSinkWithoutDeadLettersAndItResumesWhenWritable() async throws {
        let postgres = try PrivatePostgres()
        let url = try postgres.server.makeDatabase(prefix: "readonly")
        let store = try openRollupStore(url: url)
        let fixture = try SinkFixture(partitions: 1)
        let sink = try fixture.makeSink(group: "readonly-\(UUID().uuidString)", store: store)
        defer { sink.stop() }
        let first = try await fixture.publishTraffic(batches: 5, installs: 3)
        sink.start()
        #expect(await eventually { sink.counters.applied >= first.messages })
        let before = try store.position(topic: KafkaFixture.batchesTopic, partition: 0).nextOffset

        // A failover to a server that takes no writes: every transaction is read-only (SQLSTATE 25006).
        try await postgres.psql("ALTER SYSTEM SET default_transaction_read_only = on")
        try await postgres.psql("SELECT pg_reload_conf()")
        try await fixture.publish(batches: 5, from: 100, deploy: "page-api")
        #expect(await eventually { sink.stall?.reason == "store_read_only" })
        #expect(await eventually { (sink.counters.storeErrors["read_only"] ?? 0) >= 3 })
        #expect(sink.stall?.message.contains("25006") == true)
        #expect(sink.counters.deadLetters == 0 && sink.counters.refusedMessages == 0)
        #expect(try fixture.deadLetters().isEmpty)
        #expect(try store.position(topic: KafkaFixture.batchesTopic, partition: 0).nextOffset == before)

        // Writable again: the same steps commit, the deploy lands, the stall clears; nothing lost or counted twice.
        try await postgres.psql("ALTER SYSTEM RESET default_transaction_read_only")
        try await postgres.psql("SELECT pg_reload_conf()")
        #expect(await eventually { sink.counters.applied >= first.messages + 5 && sink.counters.deploys >= 1 })
        #expect(await eventually { sink.stall == nil })
        #expect(sink.counters.deadLetters == 0)
        #expect(try SinkFixture.totals(of: store).batches == 10)
        #expect(try store.position(topic: KafkaFixture.batchesTopic, partition: 0).nextOffset ?? 0 > before ?? 0)
    }

    @Test
    func c2PermissionDeniedStallsTheSinkWithoutDeadLettersAndItResumesAfterTheGrant() async throws {
        let postgres = try PrivatePostgres()
        // The sink's own role owns its database (and so its tables); an operator revokes its writes.
        try await postgres.psql("CREATE ROLE flowmeter_sink LOGIN")
        try await postgres.psql("CREATE DATABASE sink_grants OWNER flowmeter_sink")
        let url = "postgresql://flowmeter_sink@127.0.0.1:\(postgres.port)/sink_grants"
        let store = try openRollupStore(url: url)
        let fixture = try SinkFixture(partitions: 1)
        let sink = try fixture.makeSink(group: "grants-\(UUID().uuidString)", store: store)
        defer { sink.stop() }
        let first = try await fixture.publishTraffic(batches: 3, installs: 3)
        sink.start()
        #expect(await eventually { sink.counters.applied >= first.messages })
        let before = try store.position(topic: KafkaFixture.batchesTopic, partition: 0).nextOffset

        let tables = "ALL TABLES IN SCHEMA public"
        try await postgres.psql(
            "REVOKE INSERT, UPDATE, DELETE ON \(tables) FROM flowmeter_sink", database: "sink_grants")
        try await fixture.publish(batches: 3, from: 100, deploy: "page-api")
        #expect(await eventually { sink.stall?.reason == "store_permission_denied" })
        #expect(await eventually { (sink.counters.storeErrors["permission_denied"] ?? 0) >= 2 })
        #expect(sink.counters.deadLetters == 0 && sink.counters.refusedMessages == 0)
        #expect(try fixture.deadLetters().isEmpty)
        #expect(try store.position(topic: KafkaFixture.batchesTopic, partition: 0).nextOffset == before)

        try await postgres.psql("GRANT INSERT, UPDATE, DELETE ON \(tables) TO flowmeter_sink", database: "sink_grants")
        #expect(await eventually { sink.counters.applied >= first.messages + 3 && sink.counters.deploys >= 1 })
        #expect(await eventually { sink.stall == nil })
        #expect(try SinkFixture.totals(of: store).batches == 6)
    }

    /// C5, PostgreSQL: the server stops answering (its processes stopped, the kernel still acknowledging), the sink's
    /// next transaction fails within the client's response timeout instead of hanging, and the sink recovers when
    /// the server continues.
    @Test
    func c5AStalledServerSurfacesAsATimeoutAndTheSinkRecoversWhenItContinues() async throws {
        let postgres = try PrivatePostgres()
        let url = try postgres.server.makeDatabase(prefix: "stalled")
        var options = RollupStoreOptions()
        options.postgresTimeouts.responseTimeout = .seconds(2)
        options.postgresTimeouts.connect = .seconds(2)
        let store = try openRollupStore(url: url, options: options)
        let fixture = try SinkFixture(partitions: 1)
        let sink = try fixture.makeSink(group: "stalled-\(UUID().uuidString)", store: store)
        defer { sink.stop() }
        let first = try await fixture.publishTraffic(batches: 3, installs: 3)
        sink.start()
        #expect(await eventually { sink.counters.applied >= first.messages })

        // Every process of the cluster: the postmaster (no new connections) and its backends (no answers).
        let database = URL(string: url)!.lastPathComponent
        let backends = try await postgres.psql(
            "SELECT pid FROM pg_stat_activity WHERE datname = '\(database)'"
        ).split(whereSeparator: \.isNewline).compactMap { Int32($0.trimmingCharacters(in: .whitespaces)) }
        try #require(!backends.isEmpty)
        let postmaster = try #require(Self.parent(of: backends[0]))
        let stopped = [postmaster] + backends
        for pid in stopped { kill(pid, SIGSTOP) }
        var continued = false
        defer { if !continued { for pid in stopped { kill(pid, SIGCONT) } } }

        try await fixture.publish(batches: 3, from: 100, deploy: nil)
        #expect(await eventually { (sink.counters.storeErrors["timeout"] ?? 0) >= 1 })
        #expect(
            await eventually { sink.stall?.reason == "store_timed_out" || sink.stall?.reason == "store_unreachable" })
        #expect(sink.counters.deadLetters == 0)

        for pid in stopped { kill(pid, SIGCONT) }
        continued = true
        #expect(await eventually { sink.counters.applied >= first.messages + 3 })
        #expect(await eventually { sink.stall == nil })
        #expect(try SinkFixture.totals(of: store).batches == 6)
    }

    @Test func c2ADeadLetterFileThatCannotBeWrittenStallsTheSinkUntilItCan() async throws {
        let fixture = try SinkFixture(partitions: 1)
        // A real fault that root meets too: the dead-letter file's folder is a regular file (ENOTDIR).
        let folder = fixture.directory.file("letters")
        try Data("not a folder".utf8).write(to: URL(fileURLWithPath: folder))
        var configuration = RollupSinkConfiguration(bootstrapServers: fixture.kafka.bootstrapServers)
        configuration.deadLetterPath = folder + "/dead-letters.jsonl"
        configuration.groupID = "letters-\(UUID().uuidString)"
        configuration.pollTimeout = .milliseconds(200)
        configuration.retryDelay = .milliseconds(50)
        let sink = try RollupSink(configuration: configuration, store: fixture.store)
        defer { sink.stop() }

        let producer = try fixture.kafka.makeProducer()
        _ = try await producer.send(
            KafkaProducerMessage(topic: KafkaFixture.batchesTopic, key: [1], value: Array("not a batch".utf8)))
        _ = await producer.shutdown(timeout: .seconds(5))
        let traffic = try await fixture.publishTraffic(batches: 2, installs: 2)
        sink.start()
        #expect(await eventually { sink.stall?.reason == "dead_letters_unwritable" })
        #expect(await eventually { (sink.counters.storeErrors["dead_letters"] ?? 0) >= 3 })
        // Nothing moved: the bad record would otherwise be skipped unseen.
        #expect(try fixture.store.position(topic: KafkaFixture.batchesTopic, partition: 0).nextOffset == nil)
        #expect(sink.counters.applied == 0 && sink.counters.deadLetters == 0)

        try FileManager.default.removeItem(atPath: folder)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        #expect(await eventually { sink.counters.applied >= traffic.messages })
        #expect(await eventually { sink.stall == nil })
        #expect(sink.counters.deadLetters == 1)
        let lines = try String(contentsOfFile: configuration.deadLetterPath!, encoding: .utf8)
            .split(whereSeparator: \.isNewline)
        #expect(lines.count == 1)
        #expect(try fixture.totals().batches == 2)
    }

    /// The parent process of `pid`, from `/proc/<pid>/stat`.
    private static func parent(of pid: Int32) -> Int32? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > 1 ? Int32(fields[1]) : nil
    }
}

/// A throwaway PostgreSQL cluster of one test's own, with `psql` as the superuser.
final class PrivatePostgres: Sendable {
    let server: PostgresServer
    let port: Int

    init() throws {
        server = try PostgresServer()
        let url = try server.start()
        guard let port = URL(string: url)?.port else { throw ChildProcess.Failure("no port in \(url)") }
        self.port = port
    }

    deinit { server.stop() }

    /// Runs one statement as `postgres` in `database` and returns its unaligned, tuples-only output.
    @discardableResult
    func psql(_ sql: String, database: String = "postgres") async throws -> String {
        let result = try await ChildProcess.run(
            server.binDirectory + "/psql",
            [
                "-h", "127.0.0.1", "-p", "\(port)", "-U", "postgres", "-d", database, "-v", "ON_ERROR_STOP=1", "-q",
                "-A", "-t", "-c", sql,
            ], timeout: .seconds(60))
        guard result.status == 0 else {
            throw ChildProcess.Failure("psql -c \(sql) failed (\(result.status)): \(result.errors)")
        }
        return result.output
    }
}

extension SinkFixture {
    /// Publishes `batches` more batch records (numbered from `from`) and, with `deploy`, a deploy marker.
    func publish(batches: Int, from: Int, deploy service: String?) async throws {
        let now = Int64(Date().timeIntervalSince1970)
        let producer = try kafka.makeProducer()
        for index in from..<(from + batches) {
            for message in SinkFixture.messages(
                batchID: "batch-\(index)", client: SinkFixture.client(index: index),
                events: SinkFixture.events(index: index, now: now), installHash: SinkFixture.installHash(index),
                receivedAt: Timestamp(secondsSinceEpoch: now))
            {
                _ = try await producer.send(message)
            }
        }
        if let service {
            let marker = DeployMarker(
                service: service, version: "2026.12.06-1", finishedAt: Timestamp(secondsSinceEpoch: now - 60))
            _ = try await producer.send(
                KafkaProducerMessage(
                    topic: KafkaFixture.deploysTopic, key: Array(service.utf8), value: marker.jsonBytes()))
        }
        _ = await producer.shutdown(timeout: .seconds(5))
    }
}
