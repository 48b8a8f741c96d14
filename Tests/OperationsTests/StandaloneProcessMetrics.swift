import Foundation
import TestSupport
import Testing

/// The metric names a live `flowmeter sink` and a live `flowmeter watch` export on `--ops-listen`, for the checks
/// that every name a rule, dashboard or docs/metrics.md reads is exported by some Flowmeter process.
enum StandaloneProcessMetrics {
    /// The names both export (a sink on an unreachable broker still serves its ops listener).
    static func exposedNames() async throws -> Set<String> {
        let directory = try TemporaryDirectory(prefix: "flowmeter-ops-names")
        defer { directory.remove() }
        let executable = try FlowmeterExecutable.requiredPath()
        let store = directory.file("store.sqlite")
        let sink = try await ServerProcess.start(executable, readyPath: "/healthz") { port in
            ["sink", "--kafka", "127.0.0.1:1", "--store", store, "--ops-listen", "127.0.0.1:\(port)"]
        }
        defer { _ = sink.child.terminate(timeout: .seconds(15)) }
        let watch = try await ServerProcess.start(executable, readyPath: "/healthz") { port in
            ["watch", "--store", store, "--interval", "1h", "--ops-listen", "127.0.0.1:\(port)"]
        }
        defer { _ = watch.child.terminate(timeout: .seconds(15)) }
        var names: Set<String> = []
        for server in [sink, watch] {
            let answer = try await server.get("/metrics")
            try #require(answer.status == 200)
            names.formUnion(Self.names(in: answer.bodyText))
        }
        return names
    }

    /// The metric names of a Prometheus text exposition (histograms with their `_bucket`, `_sum`, `_count`).
    static func names(in text: String) -> Set<String> {
        var names: Set<String> = []
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            if fields.count >= 4, fields[0] == "#", fields[1] == "TYPE" {
                let name = String(fields[2])
                names.insert(name)
                if fields[3] == "histogram" { names.formUnion([name + "_bucket", name + "_sum", name + "_count"]) }
            } else if !line.hasPrefix("#"), let name = line.split(whereSeparator: { $0 == "{" || $0 == " " }).first {
                names.insert(String(name))
            }
        }
        return names
    }
}
