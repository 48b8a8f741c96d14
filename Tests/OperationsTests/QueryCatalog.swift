import Foundation

/// Every PromQL expression Flowmeter ships (rules and dashboards) and the metric names they mention.
enum QueryCatalog {
    /// Series Prometheus makes itself, not the collector: `up` per target and `ALERTS` per alert.
    static let prometheusSeries: Set<String> = ["up", "ALERTS"]

    /// (where, expression) for every rule `expr` and every dashboard query, annotation and variable query.
    static func expressions() throws -> [(source: String, expression: String)] {
        var found: [(String, String)] = []
        for file in Repository.ruleFiles {
            let document = try Tool.yamlToJSON(Repository.path(file)).first as? [String: Any] ?? [:]
            for group in document["groups"] as? [[String: Any]] ?? [] {
                for rule in group["rules"] as? [[String: Any]] ?? [] {
                    let name = rule["record"] as? String ?? rule["alert"] as? String ?? "?"
                    found.append(("\(file) \(name)", rule["expr"] as? String ?? ""))
                }
            }
        }
        for file in Repository.dashboards {
            let data = try Data(contentsOf: URL(fileURLWithPath: Repository.path(file)))
            let dashboard = try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
            for panel in dashboard["panels"] as? [[String: Any]] ?? [] {
                for target in panel["targets"] as? [[String: Any]] ?? [] {
                    found.append(("\(file) \(panel["title"] ?? "?")", target["expr"] as? String ?? ""))
                }
            }
            let annotations = (dashboard["annotations"] as? [String: Any])?["list"] as? [[String: Any]] ?? []
            for annotation in annotations { found.append(("\(file) annotation", annotation["expr"] as? String ?? "")) }
            let variables = (dashboard["templating"] as? [String: Any])?["list"] as? [[String: Any]] ?? []
            for variable in variables where variable["type"] as? String == "query" {
                found.append(("\(file) $\(variable["name"] ?? "?")", variable["definition"] as? String ?? ""))
            }
        }
        return found
    }

    /// Collector metric names in `expression`: identifiers starting `flowmeter_`, not part of a recording-rule name.
    static func collectorMetrics(in expression: String) -> Set<String> {
        matches(of: #"(?<![A-Za-z0-9_:])flowmeter_[A-Za-z0-9_]+(?![A-Za-z0-9_:(])"#, in: expression)
    }

    /// Recording-rule names (`level:metric:operations`) in `expression`.
    static func recordedNames(in expression: String) -> Set<String> {
        matches(of: #"(?<![A-Za-z0-9_:])[A-Za-z_]*:[A-Za-z0-9_]+:[A-Za-z0-9_]+(?![A-Za-z0-9_:])"#, in: expression)
    }

    /// The names the recording rules define.
    static func recordingRules() throws -> Set<String> {
        let document = try Tool.yamlToJSON(Repository.path(Repository.ruleFiles[0])).first as? [String: Any] ?? [:]
        let groups = document["groups"] as? [[String: Any]] ?? []
        return Set(groups.flatMap { $0["rules"] as? [[String: Any]] ?? [] }.compactMap { $0["record"] as? String })
    }

    /// A dashboard expression with Grafana's variables replaced, so Prometheus can parse it.
    static func substitutingGrafanaVariables(_ expression: String) -> String {
        expression.replacingOccurrences(of: "$__rate_interval", with: "5m")
            .replacingOccurrences(of: #"\$[A-Za-z_]+"#, with: ".*", options: .regularExpression)
    }

    private static func matches(of pattern: String, in text: String) -> Set<String> {
        let regex = try! NSRegularExpression(pattern: pattern)
        let range = NSRange(text.startIndex..., in: text)
        return Set(
            regex.matches(in: text, range: range).compactMap { match in
                Range(match.range, in: text).map { String(text[$0]) }
            })
    }
}
