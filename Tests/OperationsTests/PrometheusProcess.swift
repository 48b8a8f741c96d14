import Foundation
import TestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// A real Prometheus (Debian's `/usr/bin/prometheus`) on a free loopback port with its own temp config and storage,
/// scraping one target every second and evaluating the shipped rule files every second.
final class PrometheusProcess: @unchecked Sendable {
    let baseURL: URL
    private let process = Process()
    private let directory: TemporaryDirectory

    /// Starts Prometheus scraping `target` (`host:port`) as job `flowmeter-collector`.
    init(scraping target: String, ruleFiles: [String]) throws {
        directory = try TemporaryDirectory(prefix: "flowmeter-prometheus")
        let rules = ruleFiles.map { "  - \($0)" }.joined(separator: "\n")
        let config = """
            global:
              scrape_interval: 1s
              scrape_timeout: 1s
              evaluation_interval: 1s
            rule_files:
            \(rules)
            scrape_configs:
              - job_name: flowmeter-collector
                static_configs:
                  - targets: ["\(target)"]
            """
        try config.write(toFile: directory.file("prometheus.yml"), atomically: true, encoding: .utf8)
        let port = try FreePort.next()
        baseURL = URL(string: "http://127.0.0.1:\(port)")!
        process.executableURL = URL(fileURLWithPath: Tool.prometheus.path)
        process.arguments = [
            "--config.file=\(directory.file("prometheus.yml"))", "--storage.tsdb.path=\(directory.file("data"))",
            "--web.listen-address=127.0.0.1:\(port)", "--log.level=warn",
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
    }

    deinit {
        stop()
        directory.remove()
    }

    /// Waits (at most `timeout`) until `/-/ready` answers 200.
    func waitUntilReady(timeout: Duration = .seconds(30)) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline && process.isRunning {
            if let (_, status) = try? await get("-/ready"), status == 200 { return true }
            try await Task.sleep(for: .milliseconds(200))
        }
        return false
    }

    /// The `data` object of `/api/v1/<path>` (JSON), or nil when Prometheus did not answer success.
    func api(_ path: String, query: [URLQueryItem] = []) async throws -> Any? {
        var components = URLComponents(
            url: baseURL.appendingPathComponent("api/v1/" + path), resolvingAgainstBaseURL: false)!
        if !query.isEmpty { components.queryItems = query }
        var request = URLRequest(url: components.url!)
        request.timeoutInterval = 5
        let (data, _) = try await URLSession.shared.data(for: request)
        let answer = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        guard answer?["status"] as? String == "success" else { return nil }
        return answer?["data"]
    }

    /// The samples of an instant query: each one's labels.
    func instantQuery(_ expression: String) async throws -> [[String: String]] {
        let data = try await api("query", query: [URLQueryItem(name: "query", value: expression)]) as? [String: Any]
        let result = data?["result"] as? [[String: Any]] ?? []
        return result.map { $0["metric"] as? [String: String] ?? [:] }
    }

    private func get(_ path: String) async throws -> (Data, Int) {
        var request = URLRequest(url: baseURL.appendingPathComponent(path))
        request.timeoutInterval = 5
        let (data, response) = try await URLSession.shared.data(for: request)
        return (data, (response as? HTTPURLResponse)?.statusCode ?? 0)
    }

    /// SIGTERM, then SIGKILL after ten seconds.
    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}
