import Foundation
import Kafka
import TestSupport

/// The real collector: `flowmeter serve --kafka embedded` on a loopback port, and a consumer of its events topic at
/// the bootstrap servers its first log line names.
final class EmbeddedCollector: Sendable {
    static let ingestKey = "reporter-ingest-key-0123456789"

    let directory: TemporaryDirectory
    let server: ServerProcess

    /// Starts serve on `port` (a free one when nil) with `extra` arguments and waits (bounded) for `/healthz`.
    init(port: UInt16? = nil, extra: [String] = []) async throws {
        directory = try TemporaryDirectory(prefix: "flowmeter-reporter-serve")
        let keys = try TestKeysFile.write(
            to: directory.file("keys.json"), ingestKey: Self.ingestKey, apps: ["com.example.shop"])
        let arguments =
            [
                "--kafka", "embedded", "--keys", keys, "--salt", "00112233445566778899aabbccddeeff", "--log-level",
                "info", "--log-format", "json", "--shutdown-timeout", "10s", "--collector-id", "reporter-test",
                // Its own spool, removed with the directory: the default ./flowmeter-spool is the working directory's.
                "--spool", directory.file("spool"),
            ] + extra
        let path = try FlowmeterExecutable.requiredPath()
        if let port {
            // FlowmeterExecutable.serve gives its servers a spool of their own; this one needs one too, or it would
            // share the default ./flowmeter-spool with every other test's collector.
            let spool = ["--spool", directory.file("spool")]
            server = try ServerProcess(
                path, port: port, arguments: ["serve", "--listen", "127.0.0.1:\(port)"] + arguments + spool)
            guard await server.waitUntilReady(timeout: .seconds(30)) else {
                throw ChildProcess.Failure("serve on port \(port) never answered: \(server.child.errors.suffix(2000))")
            }
        } else {
            server = try await FlowmeterExecutable.serve(arguments, within: .seconds(30), attempts: 3)
        }
    }

    deinit {
        server.child.terminate(timeout: .zero)
    }

    /// The collector's base URL.
    var endpoint: URL { URL(string: "http://127.0.0.1:\(server.port)")! }

    /// The embedded cluster's bootstrap servers, from the first log line that names them (the warning about a
    /// salt given on the command line comes before the log, as plain text).
    func bootstrapServers() throws -> [String] {
        for line in server.child.errors.split(separator: "\n") {
            guard let logged = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let servers = logged["bootstrap_servers"] as? String
            else { continue }
            return servers.split(separator: ",").map(String.init)
        }
        throw ChildProcess.Failure("no bootstrap servers in serve's log")
    }

    /// Reads the batches topic from the beginning, each record's events one by one, until `isDone` says so or `timeout` passed; then `settle` more, so
    /// that late duplicates are seen too. Returns each message's JSON.
    func consumeEvents(
        timeout: Duration = .seconds(60), settle: Duration = .seconds(1),
        until isDone: @escaping @Sendable ([[String: Any]]) -> Bool
    ) async throws -> [[String: Any]] {
        let servers = try bootstrapServers()
        let messages = try await HTTPTestClient.onThread { () -> [[UInt8]] in
            let consumer = try KafkaConsumer(
                configuration: KafkaConsumerConfiguration(
                    bootstrapServers: servers, groupID: "reporter-test-\(UUID().uuidString)"))
            defer { consumer.close() }
            try consumer.subscribe(topics: ["flowmeter.batches.v1"])
            var values: [[UInt8]] = []
            var objects: [[String: Any]] = []
            let deadline = ContinuousClock.now + timeout
            while ContinuousClock.now < deadline && !isDone(objects) {
                let polled = try consumer.poll(maxMessages: 10_000, timeout: .milliseconds(200)).map(\.value)
                values += polled
                objects += polled.flatMap(Self.events)
            }
            let settled = ContinuousClock.now + settle
            while ContinuousClock.now < settled {
                values += try consumer.poll(maxMessages: 10_000, timeout: .milliseconds(100)).map(\.value)
            }
            return values
        }
        return messages.flatMap(Self.events)
    }

    /// The value of the sample `series` (name and labels, as written) in `/metrics`, or nil.
    func metric(_ series: String) async throws -> Double? {
        let text = try await server.get("/metrics").bodyText
        for line in text.split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.dropFirst(series.count + 1))
        }
        return nil
    }

    /// The events of one batch record, each with the batch's own fields (app, install hash, collector) beside its
    /// own, as one event message of earlier versions held them.
    private static func events(_ value: [UInt8]) -> [[String: Any]] {
        guard let record = (try? JSONSerialization.jsonObject(with: Data(value))) as? [String: Any],
            let events = record["events"] as? [[String: Any]]
        else { return [] }
        var shared = record
        shared["events"] = nil
        return events.map { event in shared.merging(event) { _, own in own } }
    }
}
