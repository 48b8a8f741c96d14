import Foundation
import TestSupport
import Testing

/// The rules and dashboards read only what a live collector exports, and only recording rules that exist.
@Suite struct MetricNamesTests {
    @Test(
        .enabled(
            if: FlowmeterExecutable.path != nil, "no flowmeter executable next to the test bundle: swift build"),
        .enabled(if: Tool.hasYAML, "python3-yaml missing: apt-get install python3-yaml"))
    func everyMetricNamedInARuleOrDashboardIsExportedByALiveCollector() async throws {
        let collector = try await CollectorProcess()
        defer { collector.stop() }
        for index in 0..<5 { try await collector.postBatch(index) }
        var exposed = try await collector.exposedNames()
        #expect(exposed.contains("flowmeter_diagnostic_events_total"))
        // The standalone sink's and watch's series (`--ops-listen`) count too.
        exposed.formUnion(try await StandaloneProcessMetrics.exposedNames())

        var referenced: [String: String] = [:]
        for (source, expression) in try QueryCatalog.expressions() {
            for name in QueryCatalog.collectorMetrics(in: expression) { referenced[name] = source }
        }
        #expect(referenced.count >= 25, "the catalog found only \(referenced.keys.sorted())")
        for (name, source) in referenced.sorted(by: { $0.key < $1.key }) {
            #expect(exposed.contains(name), "\(source) reads \(name), which no /metrics exports")
        }
    }

    @Test(
        .enabled(
            if: FlowmeterExecutable.path != nil, "no flowmeter executable next to the test bundle: swift build"))
    func everyMetricDocumentedInMetricsMarkdownIsExportedByALiveCollector() async throws {
        let documented = try Repository.text("docs/metrics.md").split(separator: "\n").filter {
            $0.hasPrefix("| `flowmeter_")
        }.compactMap { line in line.dropFirst(3).split(separator: "`").first.map(String.init) }
        #expect(documented.count >= 40, "docs/metrics.md lists \(documented.count) metrics")
        let collector = try await CollectorProcess()
        defer { collector.stop() }
        try await collector.postBatch(0)
        let exposed = try await collector.exposedNames().union(try await StandaloneProcessMetrics.exposedNames())
        for name in documented {
            #expect(exposed.contains(name), "docs/metrics.md documents \(name), which /metrics does not export")
        }
    }

    @Test(.enabled(if: Tool.hasYAML, "python3-yaml missing: apt-get install python3-yaml"))
    func everyRecordedNameReadIsDefinedByARecordingRule() throws {
        let defined = try QueryCatalog.recordingRules()
        #expect(defined.count >= 15)
        for (source, expression) in try QueryCatalog.expressions() {
            for name in QueryCatalog.recordedNames(in: expression) {
                #expect(defined.contains(name), "\(source) reads \(name), which no recording rule defines")
            }
        }
    }

    @Test func theCatalogTellsCollectorMetricsFromRecordedNames() {
        let expression = #"sum(rate(flowmeter_events_total{x="y"}[5m])) / app:flowmeter_decodes:rate5m"#
        #expect(QueryCatalog.collectorMetrics(in: expression) == ["flowmeter_events_total"])
        #expect(QueryCatalog.recordedNames(in: expression) == ["app:flowmeter_decodes:rate5m"])
    }

    /// Every dashboard query (Grafana variables replaced) is PromQL that Prometheus accepts, checked by loading them
    /// all as recording rules into `promtool check rules`.
    @Test(
        .enabled(if: Tool.promtool.isInstalled, "promtool missing: apt-get install prometheus"),
        .enabled(if: Tool.hasYAML, "python3-yaml missing: apt-get install python3-yaml"))
    func everyDashboardQueryParses() throws {
        let queries = try QueryCatalog.expressions().filter {
            $0.source.hasPrefix("Dashboards/grafana") && !$0.expression.hasPrefix("label_values(")
        }
        #expect(queries.count >= 30)
        var rules = "groups:\n  - name: dashboard-queries\n    rules:\n"
        for (index, query) in queries.enumerated() {
            let expression = QueryCatalog.substitutingGrafanaVariables(query.expression)
            // A JSON string is a YAML double-quoted scalar, as long as "/" is not escaped.
            let json = try JSONSerialization.data(
                withJSONObject: expression, options: [.fragmentsAllowed, .withoutEscapingSlashes])
            let quoted = String(decoding: json, as: UTF8.self)
            rules += "      - record: dashboard:query:q\(index)\n        expr: \(quoted)\n"
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("flowmeter-dashboard-\(UUID()).yml")
        try rules.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let run = try Tool.promtool.run(["check", "rules", file.path])
        #expect(run.succeeded, "\(run.transcript)")
    }
}
