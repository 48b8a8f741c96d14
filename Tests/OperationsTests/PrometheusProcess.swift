import Foundation
import TestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A real Prometheus (Debian's `/usr/bin/prometheus`) on a free loopback port with its own temp config and storage,
/// scraping one target every second and evaluating the shipped rule files every second.
final class PrometheusProcess: Sendable {
    let baseURL: URL
    private let server: ServerProcess
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
        let port = try ServerProcess.freeLoopbackPort()
        baseURL = URL(string: "http://127.0.0.1:\(port)")!
        server = try ServerProcess(
            Tool.prometheus.path, port: port,
            arguments: [
                "--config.file=\(directory.file("prometheus.yml"))", "--storage.tsdb.path=\(directory.file("data"))",
                "--web.listen-address=127.0.0.1:\(port)", "--log.level=warn",
            ])
    }

    deinit {
        stop()
        directory.remove()
    }

    /// Waits (at most `timeout`) until `/-/ready` answers 200.
    func waitUntilReady(timeout: Duration = Eventually.hangGuard) async throws -> Bool {
        await server.waitUntilReady(path: "/-/ready", timeout: timeout, interval: .milliseconds(200))
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

    /// SIGTERM, then SIGKILL after ten seconds.
    func stop() {
        server.child.terminate(timeout: .seconds(10))
    }
}
