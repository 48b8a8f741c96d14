import Foundation
import RollupStore
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `flowmeter sink` and `flowmeter watch` serve `/healthz`, `/readyz` and `/metrics` on `--ops-listen`
/// (docs/api.md), checked on the real binary; and docs/reliability.md C2 for SQLite: a store file that cannot be
/// written stalls the sink, `/readyz` and `/metrics` say why, and it resumes when the file can be written again.
@Suite struct SinkOperationsProcessTests {
    /// The store file's writes fail as a full disk's would, by a real limit that root meets too: the sink's
    /// `RLIMIT_FSIZE` is lowered while it runs (`prlimit`), so every write past the limit fails with `EFBIG`
    /// (`SIGXFSZ` ignored, as a shell's `trap '' XFSZ` leaves it for the program it runs).
    @Test(
        .enabled(if: FlowmeterExecutable.path != nil, "no flowmeter executable next to the test bundle: swift build"),
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/prlimit"), "prlimit (util-linux) missing"))
    func c2ASQLiteFileThatCannotBeWrittenStallsTheSinkAndReadyzAndMetricsSayWhy() async throws {
        let fixture = try SinkFixture(partitions: 1)
        let executable = try FlowmeterExecutable.requiredPath()
        let storePath = fixture.directory.file("sink-store.sqlite")
        let servers = fixture.kafka.bootstrapServers.joined(separator: ",")
        let first = try await fixture.publishTraffic(batches: 3, installs: 3)
        let sink = try await ServerProcess.start("/bin/sh", readyPath: "/healthz", within: .seconds(30)) { port in
            [
                "-c", #"trap '' XFSZ; exec "$0" "$@""#, executable, "sink", "--kafka", servers, "--store", storePath,
                "--group", "fsize-\(UUID().uuidString)", "--dead-letters", fixture.deadLetterPath,
                "--ops-listen", "127.0.0.1:\(port)", "--log-format", "logfmt",
            ]
        }
        defer { _ = sink.child.terminate(timeout: .seconds(15)) }
        let reader = try openRollupStore(url: storePath)
        func stored() throws -> Int64? {
            try reader.position(topic: KafkaFixture.batchesTopic, partition: 0).nextOffset
        }
        #expect(await eventually { (try? stored()) == Int64(first.messages) })
        #expect(try await sink.get("/readyz").status == 200)

        // Every write at or past 4 KiB fails (the soft limit): the WAL's next frame and the file's growth alike.
        let pid = sink.child.processIdentifier
        try await Self.prlimit(pid: pid, fileSize: "4096:unlimited")
        try await fixture.publish(batches: 3, from: 100, deploy: nil)
        let second = (messages: 3, events: 0)
        // EFBIG is an I/O error to SQLite, or a full disk when a write came up short.
        let reasons = ["store_io_error": "io", "store_disk_full": "disk_full"]
        let stalled = Mutex<String?>(nil)
        #expect(
            await eventually {
                guard let answer = try? await sink.get("/readyz"), answer.status == 503,
                    let body = try? JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: String],
                    let reason = body["reason"], reasons[reason] != nil
                else { return false }
                stalled.withLock { $0 = reason }
                return true
            })
        let reason = try #require(stalled.withLock { $0 })
        let metrics = try await sink.get("/metrics").bodyText
        #expect(metrics.contains(#"flowmeter_sink_stalled{reason="\#(reason)"} 1"#))
        #expect(Self.value(#"flowmeter_sink_store_errors_total{kind="\#(reasons[reason]!)"}"#, in: metrics) ?? 0 >= 1)
        #expect(Self.value("flowmeter_sink_dead_letters_total", in: metrics) == 0)
        #expect(try stored() == Int64(first.messages))
        #expect(try await sink.get("/healthz").status == 200)

        try await Self.prlimit(pid: pid, fileSize: "unlimited:unlimited")
        #expect(await eventually { (try? stored()) == Int64(first.messages + second.messages) })
        #expect(await eventually { (try? await sink.get("/readyz"))?.status == 200 })
        let after = try await sink.get("/metrics").bodyText
        #expect(after.contains(#"flowmeter_sink_stalled{reason="\#(reason)"} 0"#))
        #expect(Self.value("flowmeter_sink_applied_total", in: after) == Double(first.messages + second.messages))
        #expect(try SinkFixture.totals(of: reader).batches == Int64(first.messages + second.messages))
        #expect(Self.value("flowmeter_sink_commit_seconds_count", in: after) ?? 0 >= 2)
        #expect(after.contains(#"flowmeter_sink_partition_lag_records{partition="0"} 0"#))
        #expect(!FileManager.default.fileExists(atPath: fixture.deadLetterPath))
    }

    @Test(
        .enabled(if: FlowmeterExecutable.path != nil, "no flowmeter executable next to the test bundle: swift build"))
    func watchServesHealthReadinessAndMetricsOnItsOperationsListener() async throws {
        let directory = try TemporaryDirectory(prefix: "flowmeter-watch-ops")
        defer { directory.remove() }
        let storePath = directory.file("store.sqlite")
        _ = try openRollupStore(url: storePath)
        let watch = try await ServerProcess.start(try FlowmeterExecutable.requiredPath(), readyPath: "/healthz") {
            port in
            ["watch", "--store", storePath, "--interval", "1s", "--ops-listen", "127.0.0.1:\(port)"]
        }
        defer { _ = watch.child.terminate(timeout: .seconds(15)) }
        #expect(
            await eventually {
                guard let metrics = try? await watch.get("/metrics").bodyText else { return false }
                return Self.value(#"flowmeter_watch_passes_total{outcome="ok"}"#, in: metrics) ?? 0 >= 1
            })
        let ready = try await watch.get("/readyz")
        #expect(ready.status == 200 && ready.bodyText.contains("ready"))
        let metrics = try await watch.get("/metrics")
        #expect(metrics.header("Content-Type")?.hasPrefix("text/plain") == true)
        #expect(Self.value("flowmeter_watch_last_success_timestamp_seconds", in: metrics.bodyText) ?? 0 > 0)
    }

    @Test(
        .enabled(if: FlowmeterExecutable.path != nil, "no flowmeter executable next to the test bundle: swift build"))
    func watchIsNotReadyWhileItsStoreRefusesItAndReadyAgainAfter() async throws {
        let postgres = try PrivatePostgres()
        try await postgres.psql("CREATE ROLE flowmeter_watch LOGIN")
        try await postgres.psql("CREATE DATABASE watch_grants OWNER flowmeter_watch")
        let url = "postgresql://flowmeter_watch@127.0.0.1:\(postgres.port)/watch_grants"
        _ = try openRollupStore(url: url)
        let watch = try await ServerProcess.start(try FlowmeterExecutable.requiredPath(), readyPath: "/healthz") {
            port in
            ["watch", "--store", url, "--interval", "1s", "--ops-listen", "127.0.0.1:\(port)"]
        }
        defer { _ = watch.child.terminate(timeout: .seconds(15)) }
        #expect(await eventually { (try? await watch.get("/readyz"))?.status == 200 })

        let tables = "ALL TABLES IN SCHEMA public"
        try await postgres.psql("REVOKE SELECT ON \(tables) FROM flowmeter_watch", database: "watch_grants")
        #expect(
            await eventually {
                guard let answer = try? await watch.get("/readyz") else { return false }
                return answer.status == 503 && answer.bodyText.contains("store_unavailable")
                    && answer.bodyText.contains("42501")
            })
        let metrics = try await watch.get("/metrics").bodyText
        #expect(Self.value(#"flowmeter_watch_passes_total{outcome="failed"}"#, in: metrics) ?? 0 >= 1)

        try await postgres.psql("GRANT SELECT ON \(tables) TO flowmeter_watch", database: "watch_grants")
        #expect(await eventually { (try? await watch.get("/readyz"))?.status == 200 })
    }

    @Test(
        .enabled(if: FlowmeterExecutable.path != nil, "no flowmeter executable next to the test bundle: swift build"))
    func aStoreURLsPasswordNeverReachesTheLogOrAnError() async throws {
        let result = try await FlowmeterExecutable.run(
            [
                "sink", "--kafka", "127.0.0.1:1", "--store",
                "postgresql://flowmeter:hunter2-secret@127.0.0.1:1/rollups?connect_timeout=1&password=other-secret",
            ], timeout: .seconds(60))
        #expect(result.status != 0)
        let printed = result.output + result.errors
        #expect(printed.contains("127.0.0.1"))
        #expect(!printed.contains("hunter2-secret") && !printed.contains("other-secret"), "\(printed)")
    }

    /// Sets the file-size limit of process `pid` as `SOFT:HARD`; the hard limit stays unlimited, so the soft one can
    /// be raised again without CAP_SYS_RESOURCE.
    private static func prlimit(pid: Int32, fileSize: String) async throws {
        let result = try await ChildProcess.run("/usr/bin/prlimit", ["--pid", "\(pid)", "--fsize=\(fileSize)"])
        guard result.status == 0 else { throw ChildProcess.Failure("prlimit failed: \(result.errors)") }
    }

    /// The value of the sample `series` (name and labels exactly) in Prometheus text.
    static func value(_ series: String, in text: String) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.dropFirst(series.count + 1))
        }
        return nil
    }
}
