import Foundation

/// A real Alertmanager (Debian's `prometheus-alertmanager`) on a free loopback port, with its own temp config and
/// storage and clustering off, for tests that read alerts back from its v2 API.
///
/// `init` starts the process; `waitUntilReady()` waits (bounded) for `/-/ready`; `stop()` (also at release) sends
/// SIGTERM, then SIGKILL after five seconds, and deletes the directory. Requests go through `HTTPTestClient`, so
/// nothing here needs FoundationNetworking.
public final class AlertmanagerServer: Sendable {
    /// Why the server could not be started.
    public struct Failure: Error, CustomStringConvertible {
        /// What happened.
        public let description: String
    }

    /// Where Debian installs the binary.
    public static let binary = "/usr/bin/prometheus-alertmanager"

    /// Whether the binary is installed, for tests that skip rather than fail without it (`make test` installs it).
    public static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: binary) }

    /// The loopback port of its API.
    public var port: UInt16 { server.port }
    private let directory: TemporaryDirectory
    private let server: ServerProcess

    /// Writes a config with one null receiver and a 1 s group wait, and starts the server.
    public init() throws {
        directory = try TemporaryDirectory(prefix: "flowmeter-alertmanager")
        let config = """
            route:
              receiver: "null"
              group_wait: 1s
            receivers:
              - name: "null"
            """
        try config.write(toFile: directory.file("alertmanager.yml"), atomically: true, encoding: .utf8)
        let port = try ServerProcess.freeLoopbackPort()
        server = try ServerProcess(
            Self.binary, port: port,
            arguments: [
                "--config.file=\(directory.file("alertmanager.yml"))", "--storage.path=\(directory.file("data"))",
                "--web.listen-address=127.0.0.1:\(port)", "--cluster.listen-address=", "--log.level=warn",
            ])
    }

    deinit { stop() }

    /// The base URL, such as `http://127.0.0.1:40123`.
    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Waits (at most `timeout`) until `/-/ready` answers 200; false when it did not or the process exited.
    public func waitUntilReady(timeout: Duration = Eventually.hangGuard) async throws -> Bool {
        await server.waitUntilReady(path: "/-/ready", timeout: timeout)
    }

    /// GETs `path` (such as `/api/v2/alerts`) from the API.
    public func get(_ path: String) async throws -> HTTPTestResponse {
        try await server.get(path)
    }

    /// The current alerts (`GET /api/v2/alerts`), each as its decoded JSON object.
    public func alerts() async throws -> [[String: Any]] {
        let answer = try await get("/api/v2/alerts")
        guard answer.status == 200 else {
            throw Failure(description: "GET /api/v2/alerts answered \(answer.status): \(answer.bodyText)")
        }
        return (try JSONSerialization.jsonObject(with: Data(answer.body)) as? [[String: Any]]) ?? []
    }

    /// Stops the server (SIGTERM, then SIGKILL after five seconds) and deletes its directory; safe to call more
    /// than once.
    public func stop() {
        server.child.terminate(timeout: .seconds(5))
        directory.remove()
    }
}
