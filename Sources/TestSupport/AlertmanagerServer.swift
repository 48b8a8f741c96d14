import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

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
    public let port: UInt16
    private let directory: TemporaryDirectory
    private let processID: Mutex<pid_t?>

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
        port = try Self.freeLoopbackPort()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = [
            "--config.file=\(directory.file("alertmanager.yml"))", "--storage.path=\(directory.file("data"))",
            "--web.listen-address=127.0.0.1:\(port)", "--cluster.listen-address=", "--log.level=warn",
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        processID = Mutex(process.processIdentifier)
    }

    deinit { stop() }

    /// The base URL, such as `http://127.0.0.1:40123`.
    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Waits (at most `timeout`) until `/-/ready` answers 200; false when it did not or the process exited.
    public func waitUntilReady(timeout: Duration = .seconds(20)) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            guard isRunning else { return false }
            if let answer = try? await get("/-/ready"), answer.status == 200 { return true }
            try await Task.sleep(for: .milliseconds(100))
        }
        return false
    }

    /// GETs `path` (such as `/api/v2/alerts`) from the API.
    public func get(_ path: String) async throws -> HTTPTestResponse {
        let port = port
        return try await HTTPTestClient.onThread {
            let client = try HTTPTestClient(port: port, readTimeout: .seconds(5))
            defer { client.close() }
            return try client.request("GET", path, headers: [("Connection", "close")])
        }
    }

    /// The current alerts (`GET /api/v2/alerts`), each as its decoded JSON object.
    public func alerts() async throws -> [[String: Any]] {
        let answer = try await get("/api/v2/alerts")
        guard answer.status == 200 else {
            throw Failure(description: "GET /api/v2/alerts answered \(answer.status): \(answer.bodyText)")
        }
        return (try JSONSerialization.jsonObject(with: Data(answer.body)) as? [[String: Any]]) ?? []
    }

    /// Stops the server and deletes its directory; safe to call more than once.
    public func stop() {
        guard
            let pid = processID.withLock({ taken -> pid_t? in
                defer { taken = nil }
                return taken
            })
        else { return }
        kill(pid, SIGTERM)
        let deadline = ContinuousClock.now + .seconds(5)
        var status: Int32 = 0
        while waitpid(pid, &status, WNOHANG) == 0 {
            if ContinuousClock.now >= deadline {
                kill(pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                break
            }
            usleep(20_000)
        }
        directory.remove()
    }

    private var isRunning: Bool {
        processID.withLock { pid in pid.map { kill($0, 0) == 0 } ?? false }
    }

    private static func freeLoopbackPort() throws -> UInt16 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(description: "socket() failed: errno \(errno)") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0
            }
        }
        guard named else { throw Failure(description: "bind() failed: errno \(errno)") }
        return UInt16(bigEndian: address.sin_port)
    }
}
