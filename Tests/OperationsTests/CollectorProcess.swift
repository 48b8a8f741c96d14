import Foundation
import TestSupport
import Testing

/// `flowmeter serve --kafka none` from the executable built next to the test bundle, on a free loopback port.
final class CollectorProcess: Sendable {
    static let ingestKey = "key-ops-0123456789"
    static let app = "com.example.shop"

    private let directory: TemporaryDirectory
    private let server: ServerProcess

    /// The loopback port it listens on.
    var port: Int { Int(server.port) }

    /// Starts the collector and waits (at most 15 s) for `/healthz`.
    init() async throws {
        directory = try TemporaryDirectory(prefix: "flowmeter-ops")
        let keys = try TestKeysFile.write(
            to: directory.file("keys.json"), ingestKey: Self.ingestKey)
        server = try await FlowmeterExecutable.serve(
            [
                "--kafka", "none", "--keys", keys, "--salt", "00112233445566778899aabbccddeeff", "--collector-id",
                "ops-test", "--log-level", "warning",
            ], within: .seconds(15))
    }

    deinit {
        stop()
        directory.remove()
    }

    /// Sends SIGTERM, then SIGKILL after ten seconds.
    func stop() {
        server.child.terminate(timeout: .seconds(10))
    }

    /// GETs `path`.
    func get(_ path: String) async throws -> HTTPTestResponse {
        try await server.get(path, readTimeout: .seconds(10))
    }

    /// Posts one batch of `index` with an unknown type, a malformed payload, an event of a newer client's kind, an
    /// undecodable event and an event too old, so that every labelled family the rules read has series; expects 202.
    func postBatch(_ index: Int) async throws {
        let now = Date()
        let recent = now.addingTimeInterval(-5).formatted(.iso8601)
        let old = now.addingTimeInterval(-7 * 86_400).formatted(.iso8601)
        let events = [
            #"{"kind":"unknownType","widgetType":"hologram","count":2,"occurredAt":"\#(recent)"}"#,
            #"{"kind":"malformedPayload","widgetType":"carousel","occurredAt":"\#(recent)"}"#,
            #"{"kind":"unknownArrangement","widgetType":"grid","occurredAt":"\#(recent)"}"#,
            #"{"widgetType":"no_kind","occurredAt":"\#(recent)"}"#,
            #"{"kind":"unknownType","widgetType":"hologram","occurredAt":"\#(old)"}"#,
        ]
        let body =
            #"{"id":"ops-\#(UUID().uuidString)-\#(index)","sentAt":"\#(now.formatted(.iso8601))","#
            + #""client":{"appID":"\#(Self.app)","appVersion":"5.2.1","platform":"ios","#
            + #""buildConfiguration":"release","installID":"INSTALL-\#(index % 7)"},"#
            + #""decodes":40,"events":[\#(events.joined(separator: ","))]}"#
        let clean =
            #"{"id":"ops-clean-\#(UUID().uuidString)","sentAt":"\#(now.formatted(.iso8601))","#
            + #""client":{"appID":"\#(Self.app)","appVersion":"5.2.1","platform":"ios"},"decodes":10,"events":[]}"#
        let port = UInt16(port)
        let statuses = try await HTTPTestClient.onThread {
            try [body, clean].map { text in
                let client = try HTTPTestClient(port: port, readTimeout: .seconds(10))
                defer { client.close() }
                let headers = [("Content-Type", "application/json"), ("Authorization", "Bearer \(Self.ingestKey)")]
                return try client.request("POST", "/v1/diagnostics", headers: headers, body: Array(text.utf8)).status
            }
        }
        try #require(statuses == [202, 202], "batch \(index) answered \(statuses)")
    }

    /// The metric names `/metrics` declares (`# TYPE` lines), with `_bucket`, `_sum` and `_count` for histograms,
    /// and the sample names it printed.
    func exposedNames() async throws -> Set<String> {
        let answer = try await get("/metrics")
        try #require(answer.status == 200)
        var names: Set<String> = []
        for line in answer.bodyText.split(separator: "\n") {
            let fields = line.split(separator: " ")
            if fields.count >= 4, fields[0] == "#", fields[1] == "TYPE" {
                let name = String(fields[2])
                names.insert(name)
                if fields[3] == "histogram" || fields[3] == "summary" {
                    names.formUnion([name + "_bucket", name + "_sum", name + "_count"])
                }
            } else if !line.hasPrefix("#"), let name = line.split(whereSeparator: { $0 == "{" || $0 == " " }).first {
                names.insert(String(name))
            }
        }
        return names
    }
}
