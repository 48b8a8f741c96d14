import Foundation
import TestSupport
import Testing

/// docs/reliability.md C5: the collector and the sink binaries reach Kafka over TLS with certificate verification, given
/// only `--kafka-option`s; a CA that did not sign the brokers' certificate fails with librdkafka's reason in the log
/// and in `/readyz`; a password never shows in the log, `/metrics`, `/readyz` or `--help`.
@Suite(.serialized) struct KafkaTLSTests {
    static let ingestKey = "k-tls-0123456789"
    static let salt = "00112233445566778899aabbccddeeff"

    @Test func aBatchTravelsThroughTLSFromTheCollectorToTheSinksStore() async throws {
        let cluster = try await TLSKafkaCluster()
        let scratch = try TemporaryDirectory(prefix: "flowmeter-kafka-tls-run")
        defer { scratch.remove() }
        let collector = try await serve(
            on: cluster, keysIn: scratch,
            cluster.tlsArguments(trusting: cluster.caPath) + ["--spool", "none", "--log-level", "info"])
        defer { collector.child.terminate(timeout: .seconds(10)) }
        let store = scratch.file("store.sqlite")
        let sink = try ChildProcess(
            try FlowmeterExecutable.requiredPath(),
            [
                "sink", "--kafka", cluster.bootstrapServers.joined(separator: ","), "--store", store, "--dead-letters",
                scratch.file("dead.jsonl"),
            ] + cluster.tlsArguments(trusting: cluster.caPath))
        defer { sink.terminate(timeout: .seconds(15)) }

        // Without a spool a 202 means Kafka acknowledged the batch: it went through the TLS endpoint.
        let status = try await post(batchID: "tls-batch-1", to: collector.port)
        #expect(status == 202, "collector log: \(collector.child.errors.suffix(3000))")
        #expect(await eventually { (try? await collector.get("/readyz").status) == 200 })

        let counted = await eventually(every: .milliseconds(200)) {
            let result = try? await FlowmeterExecutable.run(
                ["top", "--store", store, "--since", "1h", "--format", "json"], timeout: .seconds(30))
            return result?.output.contains("tls_probe_widget") == true
        }
        #expect(counted, "sink log: \(sink.errors.suffix(3000))")
        #expect(cluster.isRunning)
    }

    @Test func aWrongCAFailsWithTheReasonInTheLogAndInReadiness() async throws {
        let cluster = try await TLSKafkaCluster()
        let scratch = try TemporaryDirectory(prefix: "flowmeter-kafka-tls-run")
        defer { scratch.remove() }
        let collector = try await serve(
            on: cluster, keysIn: scratch, cluster.tlsArguments(trusting: cluster.otherCAPath))
        defer { collector.child.terminate(timeout: .seconds(10)) }

        let (refused, body) = await readiness(of: collector, refusingWith: "kafka_tls_failed")
        #expect(refused, "readyz: \(body); log: \(collector.child.errors.suffix(3000)); \(cluster.diagnostics)")
        #expect(body.contains("certificate verify failed"), "\(body)")
        let log = collector.child.errors
        #expect(log.contains("kafka connection failed"), "\(log.suffix(3000))")
        #expect(log.contains("certificate verify failed"), "\(log.suffix(3000))")
    }

    /// docs/reliability.md H13: with librdkafka's defaults (the system's CA store), a broker certificate from a private CA
    /// is refused.
    @Test func aPrivateCAIsNotTrustedByDefault() async throws {
        let cluster = try await TLSKafkaCluster()
        let scratch = try TemporaryDirectory(prefix: "flowmeter-kafka-tls-run")
        defer { scratch.remove() }
        let collector = try await serve(on: cluster, keysIn: scratch, ["--kafka-option", "security.protocol=SSL"])
        defer { collector.child.terminate(timeout: .seconds(10)) }
        let (refused, body) = await readiness(of: collector, refusingWith: "kafka_tls_failed")
        #expect(refused, "readyz: \(body); log: \(collector.child.errors.suffix(3000)); \(cluster.diagnostics)")
        #expect(body.contains("certificate verify failed"), "\(body)")
    }

    @Test func aPasswordNeverShowsInTheLogMetricsReadinessOrHelp() async throws {
        let cluster = try await TLSKafkaCluster()
        let scratch = try TemporaryDirectory(prefix: "flowmeter-kafka-tls-run")
        defer { scratch.remove() }
        let password = "pw-\(UUID().uuidString)"
        let fromFile = "file-pw-\(UUID().uuidString)"
        try Data((fromFile + "\n").utf8).write(to: URL(fileURLWithPath: scratch.file("password")))
        // SASL over TLS against brokers that do not check it: the handshake is attempted with the credentials.
        let collector = try await serve(
            on: cluster, keysIn: scratch,
            [
                "--kafka-option", "security.protocol=SASL_SSL", "--kafka-option", "ssl.ca.location=\(cluster.caPath)",
                "--kafka-option", "sasl.mechanisms=PLAIN", "--kafka-option", "sasl.username=flowmeter",
                "--kafka-option", "sasl.password=\(password)", "--kafka-option-file",
                "sasl.password=\(scratch.file("password"))", "--log-level", "debug", "--response-deadline", "1s",
            ])
        defer { collector.child.terminate(timeout: .seconds(10)) }
        _ = try? await post(batchID: "tls-secret-1", to: collector.port)
        let metrics = try await collector.get("/metrics").bodyText
        let readiness = try await collector.get("/readyz").bodyText
        let help = try await FlowmeterExecutable.run(["serve", "--help"]).output
        collector.child.terminate(timeout: .seconds(10))
        let log = collector.child.output + collector.child.errors
        #expect(log.contains("--kafka-option was given on the command line"), "\(log.suffix(2000))")
        for text in [log, metrics, readiness, help] {
            #expect(!text.contains(password))
            #expect(!text.contains(fromFile))
        }
        #expect(help.contains("--kafka-option"))
    }

    @Test func mutualTLSNeedsTheClientCertificate() async throws {
        let cluster = try await TLSKafkaCluster(requiresClientCertificate: true)
        let scratch = try TemporaryDirectory(prefix: "flowmeter-kafka-mtls-run")
        defer { scratch.remove() }
        let anonymous = try await serve(on: cluster, keysIn: scratch, cluster.tlsArguments(trusting: cluster.caPath))
        defer { anonymous.child.terminate(timeout: .seconds(10)) }
        let (refused, body) = await readiness(of: anonymous, refusingWith: "kafka_tls_failed")
        #expect(refused, "readyz: \(body); log: \(anonymous.child.errors.suffix(3000)); \(cluster.diagnostics)")
        // TLS 1.3: the broker's refusal is an alert after the client's side of the handshake, a _TRANSPORT error.
        #expect(body.contains("certificate required"), "\(body)")

        let identified = try await serve(
            on: cluster, keysIn: scratch,
            ["--spool", "none"] + cluster.tlsArguments(trusting: cluster.caPath)
                + [
                    "--kafka-option", "ssl.certificate.location=\(cluster.clientCertificatePath)", "--kafka-option",
                    "ssl.key.location=\(cluster.clientKeyPath)",
                ])
        defer { identified.child.terminate(timeout: .seconds(10)) }
        // Without a spool, a 202 is Kafka's acknowledgement through the mutually authenticated endpoint.
        let status = try await post(batchID: "mtls-batch-1", to: identified.port)
        #expect(status == 202, "collector log: \(identified.child.errors.suffix(3000))")
    }

    /// SASL settings reach librdkafka and a SASL login against a listener that speaks none fails clearly: the
    /// embedded cluster has plain listeners only.
    @Test func aSASLLoginAgainstAPlainListenerFailsWithTheReasonInReadiness() async throws {
        let scratch = try TemporaryDirectory(prefix: "flowmeter-kafka-sasl-run")
        defer { scratch.remove() }
        let collector = try await FlowmeterExecutable.serve(
            [
                "--kafka", "embedded", "--keys", try keys(in: scratch), "--kafka-option",
                "security.protocol=SASL_PLAINTEXT", "--kafka-option", "sasl.mechanisms=SCRAM-SHA-256", "--kafka-option",
                "sasl.username=flowmeter", "--kafka-option-file", "sasl.password=\(try password(in: scratch))",
            ], within: .seconds(60))
        defer { collector.child.terminate(timeout: .seconds(10)) }
        let (refused, body) = await readiness(of: collector, refusingWith: "kafka_authentication_failed")
        #expect(refused, "readyz: \(body); log: \(collector.child.errors.suffix(3000))")
        #expect(body.contains("SASL"), "\(body)")
        #expect(collector.child.errors.contains("kafka connection failed"))
        #expect(!(body + collector.child.errors).contains(Self.filePassword))
    }

    static let filePassword = "file-password-8c1e0f"

    /// Waits until `/readyz` answers 503 naming `reason`: whether it did, and the last 503 body read.
    /// `flowmeter serve` with the suite's keys and salt, publishing to `cluster`, with `arguments` after those.
    private func serve(on cluster: TLSKafkaCluster, keysIn scratch: TemporaryDirectory, _ arguments: [String])
        async throws -> ServerProcess
    {
        try await FlowmeterExecutable.serve(
            [
                "--kafka", cluster.bootstrapServers.joined(separator: ","), "--keys", try keys(in: scratch), "--salt",
                Self.salt,
            ]
                + arguments, within: .seconds(60))
    }

    private func readiness(of collector: ServerProcess, refusingWith reason: String) async -> (Bool, String) {
        var body = ""
        let refused = await eventually {
            guard let answer = try? await collector.get("/readyz"), answer.status == 503 else { return false }
            body = answer.bodyText
            return body.contains(reason)
        }
        return (refused, body)
    }

    private func password(in directory: TemporaryDirectory) throws -> String {
        let path = directory.file("kafka-password")
        try Data((Self.filePassword + "\n").utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    private func keys(in directory: TemporaryDirectory) throws -> String {
        let path = directory.file("keys.json")
        try Data(#"{"ingestKeys": [{"key": "\#(Self.ingestKey)", "apps": ["*"]}]}"#.utf8)
            .write(to: URL(fileURLWithPath: path))
        return path
    }

    private func post(batchID: String, to port: UInt16) async throws -> Int {
        let now = Date()
        let body =
            #"{"id":"\#(batchID)","sentAt":"\#(now.formatted(.iso8601))","#
            + #""client":{"appID":"com.example.shop","appVersion":"5.2.1","platform":"ios","installID":"I-1"},"#
            + #""decodes":3,"events":[{"kind":"unknownType","widgetType":"tls_probe_widget","#
            + #""occurredAt":"\#(now.addingTimeInterval(-5).formatted(.iso8601))"}]}"#
        return try await HTTPTestClient.onThread {
            let client = try HTTPTestClient(port: port, readTimeout: .seconds(30))
            defer { client.close() }
            let headers = [("Content-Type", "application/json"), ("Authorization", "Bearer \(Self.ingestKey)")]
            return try client.request("POST", "/v1/diagnostics", headers: headers, body: Array(body.utf8)).status
        }
    }
}
