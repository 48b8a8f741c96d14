import Foundation
import Testing

/// The Prometheus rules: valid, unit-tested alert by alert, and written in the monitoring-mixins style.
@Suite struct RuleFilesTests {
    @Test(
        .enabled(if: Tool.promtool.isInstalled, "promtool missing: apt-get install prometheus"),
        arguments: Repository.ruleFiles)
    func ruleFilePassesPromtoolCheck(file: String) throws {
        let run = try Tool.promtool.run(["check", "rules", Repository.path(file)])
        #expect(run.succeeded, "\(run.transcript)")
    }

    @Test(
        .enabled(if: Tool.promtool.isInstalled, "promtool missing: apt-get install prometheus"),
        arguments: Repository.ruleTestFiles)
    func unitTestsPass(file: String) throws {
        let run = try Tool.promtool.run(["test", "rules", Repository.path(file)], timeout: .seconds(300))
        #expect(run.succeeded, "\(run.transcript)")
    }

    @Test(.enabled(if: Tool.hasYAML, "python3-yaml missing: apt-get install python3-yaml"))
    func everyAlertHasSeverityAndAnnotationsAndARunbookSection() throws {
        let runbook = try Repository.text("Deploy/runbook.md")
        let anchors = Set(
            runbook.split(separator: "\n").filter { $0.hasPrefix("## ") }.map {
                String($0.dropFirst(3)).lowercased().replacingOccurrences(of: " ", with: "-")
            })
        let alerts = try Self.alertRules()
        #expect(alerts.count >= 10)
        for alert in alerts {
            let name = alert["alert"] as? String ?? "?"
            let labels = alert["labels"] as? [String: Any] ?? [:]
            let annotations = alert["annotations"] as? [String: Any] ?? [:]
            #expect(["critical", "warning", "info"].contains(labels["severity"] as? String ?? ""), "\(name): severity")
            for key in ["summary", "description", "runbook_url"] {
                #expect(!(annotations[key] as? String ?? "").isEmpty, "\(name): annotation \(key)")
            }
            let url = annotations["runbook_url"] as? String ?? ""
            let anchor = url.split(separator: "#").last.map(String.init) ?? ""
            #expect(url.contains("Deploy/runbook.md#"), "\(name): runbook_url \(url)")
            #expect(anchor == name.lowercased(), "\(name): runbook anchor \(anchor)")
            #expect(anchors.contains(anchor), "\(name): Deploy/runbook.md has no section ## \(name)")
        }
    }

    /// Every alert has a unit-test case where it fires, and one where it is expected quiet on steady traffic and on
    /// traffic ramping up.
    @Test(.enabled(if: Tool.hasYAML, "python3-yaml missing: apt-get install python3-yaml"))
    func everyAlertFiresInAUnitTestAndStaysQuietOnSteadyAndRampingTraffic() throws {
        let names = Set(try Self.alertRules().compactMap { $0["alert"] as? String })
        var fires: Set<String> = []
        var quietSteady: Set<String> = []
        var quietRamp: Set<String> = []
        for file in Repository.ruleTestFiles {
            let document = try #require(try Tool.yamlToJSON(Repository.path(file)).first as? [String: Any])
            for test in document["tests"] as? [[String: Any]] ?? [] {
                let scenario = test["name"] as? String ?? ""
                for expectation in test["alert_rule_test"] as? [[String: Any]] ?? [] {
                    let name = expectation["alertname"] as? String ?? ""
                    let expected = expectation["exp_alerts"] as? [Any] ?? []
                    if !expected.isEmpty {
                        fires.insert(name)
                    } else if scenario.contains("steady") {
                        quietSteady.insert(name)
                    } else if scenario.contains("ramp") {
                        quietRamp.insert(name)
                    }
                }
            }
        }
        #expect(names.subtracting(fires).isEmpty, "never seen firing: \(names.subtracting(fires).sorted())")
        #expect(
            names.subtracting(quietSteady).isEmpty, "not tested on steady traffic: \(names.subtracting(quietSteady))")
        #expect(names.subtracting(quietRamp).isEmpty, "not tested on a ramp: \(names.subtracting(quietRamp).sorted())")
    }

    /// The alerting rules of the alert file, as parsed YAML.
    static func alertRules() throws -> [[String: Any]] {
        let document = try #require(
            try Tool.yamlToJSON(Repository.path("Dashboards/prometheus/flowmeter.alerts.yml")).first as? [String: Any])
        let groups = document["groups"] as? [[String: Any]] ?? []
        return groups.flatMap { $0["rules"] as? [[String: Any]] ?? [] }.filter { $0["alert"] != nil }
    }
}
