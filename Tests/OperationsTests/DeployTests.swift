import Foundation
import TestSupport
import Testing

/// The deployment files: systemd units, the image's runtime libraries, the topic script, the Kubernetes manifests.
@Suite struct DeployTests {
    static let units = Repository.files(under: "Deploy/systemd", extensions: ["service"])

    /// `systemd-analyze verify` on copies whose ExecStart names the executable built here (verify insists that it
    /// exists); any complaint about a unit fails.
    @Test(
        .enabled(if: Tool.canVerifyUnits, "systemd-analyze is missing or cannot verify even a trivial unit here"),
        .enabled(
            if: FlowmeterExecutable.path != nil, "no flowmeter executable next to the test bundle: swift build"),
        arguments: units)
    func systemdUnitPassesVerify(file: String) throws {
        let executable = try FlowmeterExecutable.requiredPath()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("flowmeter-units-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let name = URL(fileURLWithPath: file).lastPathComponent
        let unit = try Repository.text(file).replacingOccurrences(of: "/usr/local/bin/flowmeter", with: executable)
        try unit.write(to: directory.appendingPathComponent(name), atomically: true, encoding: .utf8)
        let run = try Tool.systemdAnalyze.run(["verify", "./" + name], in: directory.path, timeout: .seconds(60))
        let complaints = (run.output + run.errors).split(separator: "\n").filter { $0.contains(name) }
        #expect(run.succeeded && complaints.isEmpty, "\(run.transcript)")
        for option in ["NoNewPrivileges=yes", "ProtectSystem=strict", "DynamicUser=yes", "CapabilityBoundingSet="] {
            #expect(unit.contains(option), "\(name) lacks \(option)")
        }
    }

    /// The runtime stage installs a package for every shared library the built binary links directly.
    @Test(
        .enabled(if: Tool(path: "/usr/bin/readelf").isInstalled, "readelf missing: apt-get install binutils"),
        .enabled(if: FlowmeterExecutable.path != nil, "no flowmeter executable next to the test bundle: swift build")
    )
    func runtimeImageHasEveryLibraryTheBinaryLinks() throws {
        let executable = try FlowmeterExecutable.requiredPath()
        let script = Tool(path: Repository.path("scripts/ops/runtime-packages.sh"))
        let run = try script.run([executable])
        try #require(run.succeeded, "\(run.transcript)")
        let needed = run.output.split(separator: "\n").map(String.init)
        #expect(needed.contains("librdkafka1"))
        let dockerfile = try Repository.text("Deploy/Dockerfile")
        let runtime = try #require(dockerfile.components(separatedBy: "FROM debian:bookworm-slim").last)
        for package in needed {
            #expect(runtime.contains(" \(package) "), "the runtime stage does not install \(package)")
        }
    }

    /// The image builds with the commands `make` runs: `make release` (install-deps.sh build, swift build -c release).
    @Test func dockerfileBuildsWithMakeRelease() throws {
        let dockerfile = try Repository.text("Deploy/Dockerfile")
        let makefile = try Repository.text("Makefile")
        #expect(makefile.contains("release: deps"))
        #expect(dockerfile.contains("RUN make release"))
        #expect(dockerfile.contains("FROM ${SWIFT_IMAGE} AS build"))
        #expect(dockerfile.contains("USER 10001:10001"))
    }

    /// The topic script asks for replication 3 and min.insync.replicas 2 for the five topics (run against a stand-in
    /// for kafka-topics.sh that records its arguments).
    @Test func topicScriptCreatesTheFiveTopicsReplicatedThreeTimes() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("flowmeter-topics-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = directory.appendingPathComponent("calls").path
        let standIn = directory.appendingPathComponent("kafka-topics.sh").path
        try "#!/bin/sh\necho \"$*\" >> \(log)\n".write(toFile: standIn, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: standIn)
        let run = try Tool(path: "/usr/bin/env").run([
            "KAFKA_TOPICS=\(standIn)", "bash", Repository.path("Deploy/kafka/create-topics.sh"), "k1:9092",
        ])
        try #require(run.succeeded, "\(run.transcript)")
        let calls = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").filter {
            $0.contains("--create")
        }
        let topics = [
            "flowmeter.batches.v1", "flowmeter.alerts.v1", "flowmeter.deploys.v1",
            "flowmeter.manifests.v1",
        ]
        #expect(calls.count == topics.count)
        for topic in topics {
            let call = try #require(calls.first { $0.contains("--topic \(topic) ") }, "no --create for \(topic)")
            #expect(call.contains("--replication-factor 3"))
            #expect(call.contains("--config min.insync.replicas=2"))
            #expect(call.contains("--bootstrap-server k1:9092"))
        }
    }

    @Test(.enabled(if: Tool.hasYAML, "python3-yaml missing: apt-get install python3-yaml"))
    func kubernetesWorkloadsAreProbedLimitedAndNonRoot() throws {
        var kinds: [String] = []
        for file in Repository.files(under: "Deploy/kubernetes", extensions: ["yml"]) {
            for case let document as [String: Any] in try Tool.yamlToJSON(Repository.path(file)) {
                let kind = document["kind"] as? String ?? ""
                kinds.append(kind)
                guard kind == "Deployment" || kind == "StatefulSet" else { continue }
                let pod =
                    ((document["spec"] as? [String: Any])?["template"] as? [String: Any])?["spec"]
                    as? [String: Any] ?? [:]
                #expect((pod["securityContext"] as? [String: Any])?["runAsNonRoot"] as? Bool == true)
                for container in pod["containers"] as? [[String: Any]] ?? [] {
                    let security = container["securityContext"] as? [String: Any] ?? [:]
                    #expect(security["readOnlyRootFilesystem"] as? Bool == true)
                    let resources = container["resources"] as? [String: Any] ?? [:]
                    #expect(resources["requests"] != nil && resources["limits"] != nil)
                    // Every long-running process answers probes (the sink and watch on --ops-listen).
                    if ["collector", "sink", "watch"].contains(container["name"] as? String ?? "") {
                        let ready = (container["readinessProbe"] as? [String: Any])?["httpGet"] as? [String: Any]
                        let live = (container["livenessProbe"] as? [String: Any])?["httpGet"] as? [String: Any]
                        #expect(ready?["path"] as? String == "/readyz")
                        #expect(live?["path"] as? String == "/healthz")
                    }
                }
            }
        }
        for kind in ["Deployment", "Service", "HorizontalPodAutoscaler", "PodDisruptionBudget", "Secret"] {
            #expect(kinds.contains(kind), "no \(kind) in Deploy/kubernetes")
        }
    }
}
