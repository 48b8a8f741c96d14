import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// The real `flowmeter` executable, built next to the test bundle, run as a subprocess.
enum FlowmeterProcess {
    /// The executable, or a failed requirement telling to build it first.
    static func executable() throws -> URL {
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0])
        let candidates = [
            bundle.deletingLastPathComponent().appendingPathComponent("flowmeter"),
            bundle.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("flowmeter"),
        ]
        return try #require(
            candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) },
            "no flowmeter executable next to the test bundle: run swift build first")
    }

    /// Runs `flowmeter arguments` to completion (killed after `timeout`); returns status, standard output and error.
    static func run(_ arguments: [String], timeout: Duration = .seconds(60)) async throws
        -> (status: Int32, output: String, errors: String)
    {
        let process = Process()
        process.executableURL = try executable()
        process.arguments = arguments
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let handle = ProcessHandle(process)
        return try await HTTPTestClient.onThread {
            let outputData = output.fileHandleForReading.readDataToEndOfFile()
            let errorData = errors.fileHandleForReading.readDataToEndOfFile()
            handle.waitForExit(timeout: timeout)
            return (
                handle.status, String(decoding: outputData, as: UTF8.self), String(decoding: errorData, as: UTF8.self)
            )
        }
    }
}

/// A `Process` that tests hand between threads; it is only started, signalled and waited for.
final class ProcessHandle: @unchecked Sendable {
    let process: Process

    init(_ process: Process) {
        self.process = process
    }

    /// Waits up to `timeout` for the process to exit, then kills it.
    func waitForExit(timeout: Duration) {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning && ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.05)
        }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    var status: Int32 { process.isRunning ? -1 : process.terminationStatus }
}

/// `flowmeter serve` as a subprocess on a random loopback port, with helpers to post to it and stop it.
final class ServeProcess: Sendable {
    static let ingestKey = "key-shop-0123456789"
    static let adminKey = "key-admin-0123456789"
    static let app = "com.example.shop"

    let port: UInt16
    let directory: TemporaryDirectory
    private let handle: ProcessHandle

    /// Starts `flowmeter serve` with a keys file, a fixed salt and `arguments`, and waits (up to 30 s) for `/healthz`.
    init(_ arguments: [String]) async throws {
        directory = try TemporaryDirectory(prefix: "flowmeter-serve")
        let keys = directory.file("keys.json")
        try Data(
            """
            {"ingestKeys": [{"key": "\(Self.ingestKey)", "apps": ["*"],
               "rateLimit": {"eventsPerSecond": 1000000, "burst": 1000000}}],
             "adminKeys": ["\(Self.adminKey)"]}
            """.utf8
        ).write(to: URL(fileURLWithPath: keys))
        port = UInt16.random(in: 20_000...40_000)
        let process = Process()
        process.executableURL = try FlowmeterProcess.executable()
        process.arguments =
            [
                "serve", "--listen", "127.0.0.1:\(port)", "--keys", keys, "--salt", "00112233445566778899aabbccddeeff",
                "--shutdown-timeout", "10s", "--log-level", "warning", "--collector-id", "process-test",
            ] + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        handle = ProcessHandle(process)
        var isUp = false
        // Generous: on a loaded two-core machine a debug build with the embedded cluster can take a while.
        for _ in 0..<300 where !isUp {
            if let client = try? HTTPTestClient(port: port), (try? client.request("GET", "/healthz").status) == 200 {
                isUp = true
            } else {
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        if !isUp { handle.waitForExit(timeout: .zero) }
        try #require(isUp, "flowmeter serve did not come up")
    }

    deinit {
        handle.waitForExit(timeout: .zero)
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
        let handle = handle
        kill(handle.process.processIdentifier, SIGTERM)
        return try await HTTPTestClient.onThread {
            handle.waitForExit(timeout: timeout)
            return handle.status
        }
    }
}
