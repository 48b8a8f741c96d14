import FlowmeterCLI
import Foundation
import TestSupport
import Testing

@Suite struct ReportCommandTests {
    @Test func writesTheFormatNamedByTheOutputExtension() async throws {
        let scenario = try ReportScenario.make()
        let directory = try TemporaryDirectory(prefix: "flowmeter-report-command")
        for (name, prefix) in [
            ("week.html", "<!DOCTYPE html>"), ("week.md", "# Schema health 2026-W48"), ("week.json", "{"),
        ] {
            let path = directory.file(name)
            let status = await FlowmeterCommands.main([
                "report", "--week", "2026-W48", "--store", scenario.storePath, "--output", path,
            ])
            #expect(status == 0)
            let text = try String(contentsOfFile: path, encoding: .utf8)
            #expect(text.hasPrefix(prefix), "\(name) starts with \(text.prefix(40))")
        }
        let forced = directory.file("forced.txt")
        #expect(
            await FlowmeterCommands.main([
                "report", "--week", "2026-W48", "--store", scenario.storePath, "--format", "json", "--output", forced,
            ]) == 0)
        #expect(try String(contentsOfFile: forced, encoding: .utf8).contains("\"week\": \"2026-W48\""))
    }

    @Test(arguments: [
        ["report", "--week", "2026-48"], ["report", "--week", "2025-W53"], ["report", "--format", "pdf"],
        ["report", "--min-events", "0"],
    ])
    func usageErrorsExitTwo(arguments: [String]) async throws {
        let directory = try TemporaryDirectory(prefix: "flowmeter-report-usage")
        let status = await FlowmeterCommands.main(arguments + ["--store", directory.file("store.sqlite")])
        #expect(status == 2)
    }
}
