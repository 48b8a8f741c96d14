import Foundation
import TestSupport
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

    /// Every Kubernetes manifest is valid against the Kubernetes 1.31 schemas, strictly (an unknown field fails):
    /// `kubernetes-validate` checks offline, against the schemas it bundles (scripts/install-deps.sh test installs it).
    @Test(.enabled(if: Tool.hasKubernetesValidate, "kubernetes-validate missing: scripts/install-deps.sh test"))
    func kubernetesManifestsValidateAgainstTheSchemas() throws {
        let manifests = Repository.files(under: "Deploy/kubernetes", extensions: ["yml"])
            .filter { !$0.hasSuffix("kustomization.yml") }
        #expect(manifests.count >= 4)
        let run = try Tool.python.run(
            ["-m", "kubernetes_validate", "--strict", "--kubernetes-version", "1.31.0"]
                + manifests.map(Repository.path))
        #expect(run.succeeded, "\(run.transcript)")
        // The check can fail: a manifest with a misspelled field does not pass.
        let directory = try TemporaryDirectory(prefix: "flowmeter-k8s-invalid")
        let invalid = directory.file("invalid.yml")
        try """
        apiVersion: policy/v1
        kind: PodDisruptionBudget
        metadata: {name: x}
        spec: {maxUnavailabel: 1, selector: {matchLabels: {a: b}}}
        """.write(toFile: invalid, atomically: true, encoding: .utf8)
        let rejected = try Tool.python.run(
            ["-m", "kubernetes_validate", "--strict", "--kubernetes-version", "1.31.0", invalid])
        #expect(!rejected.succeeded, "\(rejected.transcript)")
    }

    /// docs/reliability.md C4: a collector pod replaced (rollout, drain, scale-down) while Kafka is away keeps its spool:
    /// the shipped collector is a StatefulSet whose spool directory lies on a claim from its volumeClaimTemplates
    /// (kept on scale-down), probed on the ops listener, with a disruption budget and an HPA that scales it, and
    /// kustomization.yml names every manifest.
    @Test(.enabled(if: Tool.hasYAML, "python3-yaml missing: apt-get install python3-yaml"))
    func theCollectorSpoolOutlivesItsPodC4() throws {
        let documents = try Tool.yamlToJSON(Repository.path("Deploy/kubernetes/collector.yml"))
            .compactMap { $0 as? [String: Any] }
        func kind(_ name: String) -> [String: Any]? { documents.first { $0["kind"] as? String == name } }
        let set = try #require(kind("StatefulSet"), "the collector runs as a StatefulSet")
        #expect(kind("Deployment") == nil, "no collector Deployment (its emptyDir spool dies with the pod)")
        let spec = set["spec"] as? [String: Any] ?? [:]
        let retention = spec["persistentVolumeClaimRetentionPolicy"] as? [String: String] ?? [:]
        #expect(retention["whenScaled"] ?? "Retain" == "Retain" && retention["whenDeleted"] ?? "Retain" == "Retain")
        let claims = (spec["volumeClaimTemplates"] as? [[String: Any]] ?? []).compactMap {
            ($0["metadata"] as? [String: Any])?["name"] as? String
        }
        let pod = (spec["template"] as? [String: Any])?["spec"] as? [String: Any] ?? [:]
        let volumes = (pod["volumes"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        let container = try #require(
            (pod["containers"] as? [[String: Any]] ?? []).first { $0["name"] as? String == "collector" })
        let arguments = container["args"] as? [String] ?? []
        let spool = try #require(
            arguments.first { $0.hasPrefix("--spool=") }.map { String($0.dropFirst("--spool=".count)) })
        let mounts = container["volumeMounts"] as? [[String: Any]] ?? []
        let spoolMount = try #require(
            mounts.first { spool.hasPrefix(($0["mountPath"] as? String ?? "//") + "/") }, "the spool is on a mount")
        let volume = spoolMount["name"] as? String ?? ""
        #expect(claims.contains(volume), "\(spool) is on \(volume), a claim of the volumeClaimTemplates: \(claims)")
        #expect(!volumes.contains(volume), "\(volume) is not a pod volume (an emptyDir dies with the pod)")

        let ops = try #require(arguments.first { $0.hasPrefix("--ops-listen=") })
        let opsPort = Int(ops.split(separator: ":").last ?? "")
        let ports = container["ports"] as? [[String: Any]] ?? []
        for probe in ["readinessProbe", "livenessProbe", "startupProbe"] {
            let get = (container[probe] as? [String: Any])?["httpGet"] as? [String: Any]
            let port = get?["port"]
            let number =
                (port as? Int)
                ?? ports.first { $0["name"] as? String == port as? String }?["containerPort"] as? Int
            #expect(
                number != nil && number == opsPort,
                "\(probe) on the ops listener (\(ops)), not \(String(describing: port))")
        }
        let grace = pod["terminationGracePeriodSeconds"] as? Int ?? 30
        let shutdown = arguments.first { $0.hasPrefix("--shutdown-timeout=") }
        #expect(shutdown == "--shutdown-timeout=30s" && grace > 30, "the grace period covers --shutdown-timeout")

        let budget = try #require(kind("PodDisruptionBudget"))
        #expect((budget["spec"] as? [String: Any])?["maxUnavailable"] as? Int == 1)
        let autoscaler = try #require(kind("HorizontalPodAutoscaler"))
        let target = (autoscaler["spec"] as? [String: Any])?["scaleTargetRef"] as? [String: Any] ?? [:]
        #expect(target["kind"] as? String == "StatefulSet" && target["name"] as? String == "flowmeter-collector")
        let governing = spec["serviceName"] as? String
        #expect(
            documents.contains {
                $0["kind"] as? String == "Service"
                    && ($0["metadata"] as? [String: Any])?["name"] as? String == governing
                    && ($0["spec"] as? [String: Any])?["clusterIP"] as? String == "None"
            }, "the StatefulSet's governing Service \(governing ?? "-") is headless")

        let kustomization = try #require(
            try Tool.yamlToJSON(Repository.path("Deploy/kubernetes/kustomization.yml")).first as? [String: Any])
        let resources = Set(kustomization["resources"] as? [String] ?? [])
        let manifests = Set(
            Repository.files(under: "Deploy/kubernetes", extensions: ["yml"]).map {
                URL(fileURLWithPath: $0).lastPathComponent
            }
        ).subtracting(["kustomization.yml", "secret.example.yml"])
        #expect(
            resources == manifests,
            "kustomization.yml lists \(resources.sorted()), the manifests are \(manifests.sorted())")
    }
}
