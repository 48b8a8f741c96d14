import Foundation
import TestSupport
import Testing

/// A real Prometheus scrapes a live collector on loopback and evaluates the shipped rules.
@Suite struct LivePrometheusTests {
    @Test(
        .enabled(if: Tool.prometheus.isInstalled, "prometheus missing: apt-get install prometheus"),
        .enabled(if: FlowmeterExecutable.path != nil, "no flowmeter executable next to the test bundle: swift build")
    )
    func prometheusScrapesTheCollectorAndARecordingRuleReturnsData() async throws {
        let collector = try await CollectorProcess()
        defer { collector.stop() }
        let prometheus = try PrometheusProcess(
            scraping: "127.0.0.1:\(collector.port)", ruleFiles: Repository.ruleFiles.map(Repository.path))
        defer { prometheus.stop() }
        try #require(try await prometheus.waitUntilReady(), "Prometheus did not become ready")

        // Keep traffic flowing until the per-app rates, which need two scrapes with an increase between, exist.
        var decodes: [[String: String]] = []
        var diagnostics: [[String: String]] = []
        let deadline = ContinuousClock.now + Eventually.hangGuard
        var index = 0
        while (decodes.isEmpty || diagnostics.isEmpty) && ContinuousClock.now < deadline {
            try await collector.postBatch(index)
            index += 1
            try await Task.sleep(for: .milliseconds(300))
            decodes = try await prometheus.instantQuery("app:flowmeter_decodes:rate5m > 0")
            diagnostics = try await prometheus.instantQuery(
                #"app_kind_widget_type:flowmeter_diagnostic_events_per_traffic:ratio_rate5m{kind="unknownType"} > 0"#)
        }
        #expect(decodes.map { $0["app"] } == [CollectorProcess.app])
        #expect(diagnostics.first?["widget_type"] == "hologram")
        #expect(try await prometheus.instantQuery(#"up{job="flowmeter-collector"} == 1"#).count == 1)

        // Every shipped rule loaded and evaluated without an error against real data.
        let rules = try #require(try await prometheus.api("rules") as? [String: Any])
        let loaded = (rules["groups"] as? [[String: Any]] ?? []).flatMap { $0["rules"] as? [[String: Any]] ?? [] }
        #expect(loaded.count >= 30)
        for rule in loaded {
            #expect(rule["health"] as? String != "err", "\(rule["name"] ?? "?"): \(rule["lastError"] ?? "")")
        }
    }
}
