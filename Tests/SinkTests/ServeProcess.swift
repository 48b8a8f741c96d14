import Foundation
import TestSupport
import Testing

/// `flowmeter serve` as a subprocess on a free loopback port, with helpers to post to it and stop it.
final class ServeProcess: Sendable {
    static let ingestKey = "key-shop-0123456789"
    static let adminKey = "key-admin-0123456789"
    static let app = "com.example.shop"

    let directory: TemporaryDirectory
    private let server: ServerProcess

    /// The loopback port it listens on.
    var port: UInt16 { server.port }

    /// Starts `flowmeter serve` with a keys file, a fixed salt and `arguments`, and waits (up to 30 s) for `/healthz`.
    init(_ arguments: [String]) async throws {
        directory = try TemporaryDirectory(prefix: "flowmeter-serve")
        let keys = try TestKeysFile.write(
            to: directory.file("keys.json"), ingestKey: Self.ingestKey, adminKeys: [Self.adminKey])
        // Generous: on a loaded two-core machine a debug build with the embedded cluster can take a while.
        server = try await FlowmeterExecutable.serve(
            [
                "--keys", keys, "--salt", "00112233445566778899aabbccddeeff", "--shutdown-timeout", "10s",
                "--log-level", "warning", "--collector-id", "process-test",
            ] + arguments, within: .seconds(30))
    }

    deinit {
        server.child.terminate(timeout: .zero)
        directory.remove()
    }

    /// Posts `body` to `path` with `key` and returns the answer.
    func post(_ body: [UInt8], key: String? = ingestKey, path: String = "/v1/diagnostics") async throws
        -> HTTPTestResponse
    {
        let port = port
        var headers = [("Content-Type", "application/json")]
        if let key { headers.append(("Authorization", "Bearer \(key)")) }
        let sent = headers
        return try await HTTPTestClient.onThread {
            let client = try HTTPTestClient(port: port, readTimeout: .seconds(15))
            defer { client.close() }
            return try client.request("POST", path, headers: sent, body: body)
        }
    }

    /// Posts `batches` batches, batch `i` from install `INSTALL-(i % installs)` with four events of counts 1…3, each
    /// expecting 202; returns the events' total count.
    func postTraffic(batches: Int, installs: Int, app: String = app) async throws -> Int64 {
        var total: Int64 = 0
        for index in 0..<batches {
            var items: [String] = []
            for event in 0..<4 {
                let count = 1 + (index + event) % 3
                total += Int64(count)
                items.append(
                    #"{"kind":"unknownType","widgetType":"type-\#(event)","count":\#(count),"#
                        + #""occurredAt":"\#(Date().addingTimeInterval(-5).formatted(.iso8601))"}"#)
            }
            let body =
                #"{"id":"batch-\#(index)","sentAt":"\#(Date().formatted(.iso8601))","#
                + #""client":{"appID":"\#(app)","appVersion":"5.2.1","platform":"ios","#
                + #""buildConfiguration":"release","installID":"INSTALL-\#(index % installs)"},"#
                + #""decodes":10,"events":[\#(items.joined(separator: ","))]}"#
            let answer = try await post(Array(body.utf8))
            try #require(answer.status == 202, "batch \(index) answered \(answer.status): \(answer.bodyText)")
        }
        return total
    }

    /// Sends SIGTERM and waits (bounded) for the exit status.
    func terminate(timeout: Duration = .seconds(40)) async throws -> Int32 {
        await server.child.stop(timeout: timeout)
    }
}

extension ServeProcess {
    /// Runs `flowmeter serve --kafka none --listen 127.0.0.1:0` with a one-key keys file and `arguments`, for
    /// settings it must refuse before it listens; returns how it ended.
    static func runRefusing(_ arguments: [String]) async throws -> ChildProcess.Result {
        let keys = try TemporaryDirectory(prefix: "flowmeter-serve-usage")
        defer { keys.remove() }
        let file = keys.file("keys.json")
        try Data(#"{"ingestKeys": [{"key": "k-0123456789", "apps": ["*"]}]}"#.utf8).write(
            to: URL(fileURLWithPath: file))
        return try await FlowmeterExecutable.run(
            ["serve", "--keys", file, "--kafka", "none", "--listen", "127.0.0.1:0"] + arguments)
    }
}
