import Foundation
import Kafka
import TestSupport
import Testing

/// README and docs/collector.md: `serve --kafka embedded` logs its bootstrap servers first, and a separate Kafka
/// client at those servers reads what the collector published (what `kcat -b` would do).
@Suite struct EmbeddedClusterTests {
    @Test func anOutsideConsumerReadsTheBatchesTopicAtTheFirstLoggedBootstrapServers() async throws {
        let directory = try TemporaryDirectory(prefix: "flowmeter-embedded")
        defer { directory.remove() }
        let keys = directory.file("keys.json")
        try Data(#"{"ingestKeys": [{"key": "\#(ServeProcess.ingestKey)", "apps": ["*"]}]}"#.utf8)
            .write(to: URL(fileURLWithPath: keys))
        let server = try await FlowmeterExecutable.serve(
            [
                "--kafka", "embedded", "--keys", keys, "--salt", "00112233445566778899aabbccddeeff",
                "--log-level", "info", "--log-format", "json",
            ], within: .seconds(30))
        defer { server.child.terminate(timeout: .zero) }

        let body =
            #"{"id":"embedded-1","sentAt":"\#(Date().formatted(.iso8601))","#
            + #""client":{"appID":"com.example.shop","appVersion":"5.2.1","platform":"ios","#
            + #""buildConfiguration":"release","installID":"INSTALL-1"},"decodes":3,"events":["#
            + #"{"kind":"unknownType","widgetType":"kcat_probe","count":2,"#
            + #""occurredAt":"\#(Date().addingTimeInterval(-5).formatted(.iso8601))"}]}"#
        let port = server.port
        let answer = try await HTTPTestClient.onThread {
            let client = try HTTPTestClient(port: port, readTimeout: .seconds(15))
            defer { client.close() }
            return try client.request(
                "POST", "/v1/diagnostics",
                headers: [("Content-Type", "application/json"), ("Authorization", "Bearer \(ServeProcess.ingestKey)")],
                body: Array(body.utf8))
        }
        try #require(answer.status == 202, "answered \(answer.status): \(answer.bodyText)")

        // The first log line (a warning about a secret on the command line would come before it, as plain text).
        let firstLine = try #require(
            server.child.errors.split(separator: "\n").first { $0.hasPrefix("{") }, "serve logged nothing")
        let logged = try #require(
            try JSONSerialization.jsonObject(with: Data(firstLine.utf8)) as? [String: Any], "not JSON: \(firstLine)")
        #expect(logged["msg"] as? String == "embedded kafka cluster started", "first line: \(firstLine)")
        let servers = try #require(logged["bootstrap_servers"] as? String, "first line: \(firstLine)")
            .split(separator: ",").map(String.init)
        try #require(!servers.isEmpty)

        let messages = try await HTTPTestClient.onThread {
            let consumer = try KafkaConsumer(
                configuration: KafkaConsumerConfiguration(
                    bootstrapServers: servers, groupID: "outside-\(UUID().uuidString)"))
            defer { consumer.close() }
            try consumer.subscribe(topics: ["flowmeter.batches.v1"])
            var messages: [KafkaConsumerMessage] = []
            let deadline = ContinuousClock.now + Eventually.hangGuard
            while messages.isEmpty && ContinuousClock.now < deadline {
                messages += try consumer.poll(maxMessages: 100, timeout: .milliseconds(200))
            }
            return messages
        }
        #expect(messages.contains { String(decoding: $0.value, as: UTF8.self).contains("kcat_probe") })
    }
}
