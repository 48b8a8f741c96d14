import Foundation
import TestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// A real Alertmanager (Debian's `prometheus-alertmanager`) on a free loopback port, with its own temp config and
/// storage and clustering off; stopped by ``stop()``.
final class AlertmanagerProcess {
    static let binary = "/usr/bin/prometheus-alertmanager"

    let baseURL: URL
    private let process = Process()
    private let directory: TemporaryDirectory

    static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: binary) }

    init() throws {
        directory = try TemporaryDirectory(prefix: "flowmeter-alertmanager")
        let config = """
            route:
              receiver: "null"
              group_wait: 1s
            receivers:
              - name: "null"
            """
        try config.write(toFile: directory.file("alertmanager.yml"), atomically: true, encoding: .utf8)
        let port = try Self.freePort()
        baseURL = URL(string: "http://127.0.0.1:\(port)")!
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = [
            "--config.file=\(directory.file("alertmanager.yml"))", "--storage.path=\(directory.file("data"))",
            "--web.listen-address=127.0.0.1:\(port)", "--cluster.listen-address=", "--log.level=warn",
        ]
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
    }

    /// Waits (at most `timeout`) until `/-/ready` answers 200.
    func waitUntilReady(timeout: Duration = .seconds(20)) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if !process.isRunning { return false }
            if let (_, status) = try? await get("-/ready"), status == 200 { return true }
            try await Task.sleep(for: .milliseconds(100))
        }
        return false
    }

    /// GETs `path` under the base URL; returns the body and status.
    func get(_ path: String) async throws -> (Data, Int) {
        var request = URLRequest(url: baseURL.appendingPathComponent(path))
        request.timeoutInterval = 5
        let (data, response) = try await URLSession.shared.data(for: request)
        return (data, (response as? HTTPURLResponse)?.statusCode ?? 0)
    }

    /// Stops the process: SIGTERM, then SIGKILL after five seconds.
    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    deinit { stop() }

    /// A loopback TCP port that was free a moment ago (bound to port 0 and released).
    private static func freePort() throws -> Int {
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
