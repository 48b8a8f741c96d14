import Foundation
import Testing

/// Every configuration file shipped in Dashboards/ and Deploy/ parses, and the tools that own them accept them.
@Suite struct ConfigFilesTests {
    static let yamlFiles =
        Repository.files(under: "Dashboards", extensions: ["yml", "yaml"])
        + Repository.files(under: "Deploy", extensions: ["yml", "yaml"])
    static let jsonFiles =
        Repository.files(under: "Dashboards", extensions: ["json"])
        + Repository.files(under: "Deploy", extensions: ["json"])

    @Test func theFileListsAreNotEmpty() {
        #expect(Self.yamlFiles.count >= 12)
        #expect(Self.jsonFiles.count >= 3)
    }

    @Test(.enabled(if: Tool.hasYAML, "python3-yaml missing: apt-get install python3-yaml"), arguments: yamlFiles)
    func yamlFileParses(file: String) throws {
        let documents = try Tool.yamlToJSON(Repository.path(file))
        #expect(!documents.isEmpty && documents.allSatisfy { $0 is [String: Any] }, "\(file): not a YAML mapping")
    }

    @Test(arguments: jsonFiles)
    func jsonFileParses(file: String) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: Repository.path(file)))
        #expect(try JSONSerialization.jsonObject(with: data) is [String: Any])
    }

    @Test(arguments: Repository.dashboards)
    func dashboardUsesTheProvisionedDatasourceAndHasUniquePanelIDs(file: String) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: Repository.path(file)))
        let dashboard = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect((dashboard["uid"] as? String)?.hasPrefix("flowmeter-") == true)
        let panels = dashboard["panels"] as? [[String: Any]] ?? []
        let ids = panels.compactMap { $0["id"] as? Int }
        #expect(ids.count == panels.count && Set(ids).count == ids.count)
        let variables = (dashboard["templating"] as? [String: Any])?["list"] as? [[String: Any]] ?? []
        let datasource = variables.first { $0["name"] as? String == "datasource" }
        #expect((datasource?["current"] as? [String: Any])?["value"] as? String == "flowmeter-prometheus")
        let provisioning = try Repository.text("Dashboards/grafana/provisioning/datasources/flowmeter.yml")
        #expect(provisioning.contains("uid: flowmeter-prometheus"))
    }

    @Test(.enabled(if: Tool.amtool.isInstalled, "amtool missing: apt-get install prometheus-alertmanager"))
    func alertmanagerConfigIsValidAndRoutesBySeverityAndTeam() throws {
        let config = Repository.path("Dashboards/alertmanager/alertmanager.yml")
        let check = try Tool.amtool.run(["check-config", config])
        #expect(check.succeeded, "\(check.transcript)")
        for (labels, receivers) in [
            (["severity=critical", "alertname=FlowmeterKafkaUnavailable"], "pager,team-channel"),
            (["severity=warning", "alertname=FlowmeterUnknownTypeSpike"], "team-channel"),
            (["severity=info", "alertname=FlowmeterNewType"], "notices"),
            // The detector's alerts with a team label (`--owners`) go to that team; critical ones page as well.
            (["severity=warning", "alertname=FlowmeterSpike", "team=catalog"], "catalog"),
            (["severity=critical", "alertname=FlowmeterUngatedType", "team=immersive"], "pager,immersive"),
            (["severity=warning", "alertname=FlowmeterSpike", "team=unrouted-team"], "team-channel"),
            (["severity=info", "alertname=FlowmeterNewType", "team=catalog"], "notices"),
        ] {
            let route = try Tool.amtool.run(
                ["config", "routes", "test", "--config.file=\(config)", "--verify.receivers=\(receivers)"] + labels)
            #expect(route.succeeded, "\(labels) → \(route.transcript)")
        }
    }

    @Test(.enabled(if: Tool.promtool.isInstalled, "promtool missing: apt-get install prometheus"))
    func composePrometheusConfigIsValid() throws {
        let run = try Tool.promtool.run(["check", "config", Repository.path("Deploy/compose/prometheus.yml")])
        #expect(run.succeeded, "\(run.transcript)")
    }

    @Test(.enabled(if: Tool.hasYAML, "python3-yaml missing: apt-get install python3-yaml"))
    func composeRunsThePipelineAndMountsFilesThatExist() throws {
        let compose = try #require(
            try Tool.yamlToJSON(Repository.path("Deploy/compose/compose.yml")).first as? [String: Any])
        let services = compose["services"] as? [String: [String: Any]] ?? [:]
        for name in ["kafka", "collector", "sink", "prometheus", "alertmanager", "grafana"] {
            #expect(services[name] != nil, "compose has no \(name)")
        }
        let kafka = services["kafka"]?["environment"] as? [String: Any] ?? [:]
        #expect((kafka["KAFKA_PROCESS_ROLES"] as? String)?.contains("controller") == true, "Kafka in KRaft mode")
        for (name, service) in services {
            for volume in service["volumes"] as? [String] ?? [] where volume.hasPrefix(".") {
                let source = String(volume.split(separator: ":")[0])
                let path = URL(fileURLWithPath: Repository.path("Deploy/compose/" + source)).standardized.path
                #expect(FileManager.default.fileExists(atPath: path), "\(name) mounts \(source), which is missing")
            }
        }
    }
}
