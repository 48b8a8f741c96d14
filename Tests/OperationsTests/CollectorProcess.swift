import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `flowmeter serve --kafka none` from the executable built next to the test bundle, on a free loopback port.
final class CollectorProcess: @unchecked Sendable {
    static let ingestKey = "key-ops-0123456789"
    static let app = "com.example.shop"

    /// The executable, or nil when it was not built.
    static var executable: URL? {
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0])
        let candidates = [
            bundle.deletingLastPathComponent().appendingPathComponent("flowmeter"),
            bundle.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("flowmeter"),
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    let port: Int
    private let process = Process()
    private let directory: TemporaryDirectory

    /// Starts the collector and waits (at most 15 s) for `/healthz`.
    init() async throws {
        let executable = try #require(Self.executable, "no flowmeter executable next to the test bundle: swift build")
        directory = try TemporaryDirectory(prefix: "flowmeter-ops")
        let keys = directory.file("keys.json")
        try Data(
            #"{"ingestKeys": [{"key": "\#(Self.ingestKey)", "apps": ["*"], "rateLimit": {"eventsPerSecond": 1000000, "burst": 1000000}}]}"#
                .utf8
        ).write(to: URL(fileURLWithPath: keys))
        port = try FreePort.next()
        process.executableURL = executable
        process.arguments = [
            "serve", "--kafka", "none", "--listen", "127.0.0.1:\(port)", "--keys", keys,
            "--salt", "00112233445566778899aabbccddeeff", "--collector-id", "ops-test", "--log-level", "warning",
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        var isUp = false
        for _ in 0..<150 where !isUp && process.isRunning {
            isUp = (try? await get("/healthz").status) == 200
            if !isUp { try await Task.sleep(for: .milliseconds(100)) }
        }
        if !isUp { stop() }
        try #require(isUp, "flowmeter serve did not come up on 127.0.0.1:\(port)")
    }

    deinit {
        stop()
        directory.remove()
    }

    /// Sends SIGTERM, then SIGKILL after ten seconds.
    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// GETs `path`.
    func get(_ path: String) async throws -> HTTPTestResponse {
        let port = UInt16(port)
        return try await HTTPTestClient.onThread {
            let client = try HTTPTestClient(port: port, readTimeout: .seconds(10))
            defer { client.close() }
            return try client.request("GET", path)
        }
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

/// Free loopback TCP ports.
enum FreePort {
    /// A loopback port that was free a moment ago (bound to port 0 and released).
    static func next() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Bool in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw POSIXError(.EADDRINUSE) }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
