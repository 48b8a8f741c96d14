import Foundation

/// Paths inside the repository checkout the tests were built from.
enum Repository {
    /// The checkout's root: three levels above this file (Tests/OperationsTests/Repository.swift).
    static let root: String = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// `relative` under the root.
    static func path(_ relative: String) -> String { root + "/" + relative }

    /// Every regular file under `directory` (relative to the root) whose name ends with one of `extensions`, sorted.
    static func files(under directory: String, extensions: [String]) -> [String] {
        let base = URL(fileURLWithPath: path(directory)).resolvingSymlinksInPath().path
        guard let enumerator = FileManager.default.enumerator(atPath: base) else { return [] }
        var found: [String] = []
        while let name = enumerator.nextObject() as? String {
            if extensions.contains(where: { name.hasSuffix("." + $0) }) { found.append(directory + "/" + name) }
        }
        return found.sorted()
    }

    /// The contents of `relative` as text.
    static func text(_ relative: String) throws -> String {
        try String(contentsOfFile: path(relative), encoding: .utf8)
    }

    /// The recording and alert rule files.
    static let ruleFiles = ["Dashboards/prometheus/flowmeter.rules.yml", "Dashboards/prometheus/flowmeter.alerts.yml"]

    /// The promtool unit-test files.
    static var ruleTestFiles: [String] { files(under: "Dashboards/prometheus/tests", extensions: ["yml"]) }

    /// The Grafana dashboards.
    static var dashboards: [String] { files(under: "Dashboards/grafana", extensions: ["json"]) }
}
