import FlowmeterCLI
import Testing

@Suite struct UsageTests {
    @Test(arguments: [
        (["top", "--since", "5x"], "invalid value '5x' for --since"),
        (["top", "--format", "xml"], "invalid value 'xml' for --format: expected table, json or csv"),
        (["top", "--from", "yesterday"], "invalid value 'yesterday' for --from"),
        (["top", "--from", "2026-11-30T06:00:00Z", "--since", "1h"], "--since and --from cannot be used together"),
        (["top", "--from", "2026-11-30T10:00:00Z", "--to", "2026-11-30T06:00:00Z"], "the window is empty"),
        (["ungated", "--min-installs", "-3"], "invalid value '-3' for --min-installs"),
        (["ungated", "--deploy-window", "soon"], "invalid value 'soon' for --deploy-window"),
        (["spikes", "--min-ratio", "0.5"], "invalid value '0.5' for --min-ratio"),
        (["check"], "missing PAYLOAD.json"),
        // Several payloads are fine (CI); a format check does not know is not.
        (["check", "a.json", "b.json", "--format", "xml"], "invalid value 'xml' for --format"),
        (["check", "a.json", "--max-unknown-share", "150%"], "invalid value '150%' for --max-unknown-share"),
        (["versions", "--colour"], "unknown option '--colour'"),
        (["types", "--sinse", "1h"], "unknown option '--sinse' (did you mean --since?)"),
        (["tpo"], "unknown command 'tpo' (did you mean 'top'?)"),
        (["top", "stray"], "unexpected argument 'stray'"),
    ])
    func usageErrorsExitTwoAndSayWhatWasWrong(arguments: [String], message: String) async {
        let result = await CLI.run(arguments)
        #expect(result.status == 2, "\(arguments): \(result.standardError)")
        #expect(result.standardError.contains("error: "), "\(arguments)")
        #expect(result.standardError.contains(message), "\(arguments): \(result.standardError)")
        #expect(result.standardError.contains("--help"))
    }

    @Test(arguments: ["top", "spikes", "ungated", "versions", "types"])
    func missingStoreIsAnErrorNamingThePathAndTheFix(command: String) async {
        let result = await CLI.run([command, "--store", "/nonexistent/dir/flowmeter.sqlite"])
        #expect(result.status == 1)
        #expect(result.standardError.contains("no rollup store at '/nonexistent/dir/flowmeter.sqlite'"))
        #expect(result.standardError.contains("flowmeter serve --store /nonexistent/dir/flowmeter.sqlite"))
    }

    @Test func defaultStoreComesFromTheEnvironment() async {
        let result = await CLI.run(["versions"], environment: ["FLOWMETER_STORE": "/nonexistent/env.sqlite"])
        #expect(result.status == 1)
        #expect(result.standardError.contains("'/nonexistent/env.sqlite'"))
    }

    @Test func unreadablePayloadIsAnError() async throws {
        let store = try SeededStore()
        let result = await CLI.run(["check", "/nonexistent/page.json"] + store.window)
        #expect(result.status == 1)
        #expect(result.standardError.contains("cannot read payload '/nonexistent/page.json'"))
    }

    @Test func versionPrints() async {
        let result = await CLI.run(["--version"])
        #expect(result.status == 0)
        #expect(result.standardOutput == "flowmeter 0.1.0\n")
    }

    /// The executable hands its build details (the allocator) to the runner; `--version` prints them under the
    /// version, and only there.
    @Test func versionPrintsBuildDetails() async {
        let buffer = CommandOutputBuffer()
        let runner = CommandRunner(
            root: FlowmeterCommands.root, version: "9.9.9", buildDetails: ["allocator: test 1.0"])
        let status = await runner.run(["--version"], environment: [:], output: CommandOutput(buffer: buffer))
        #expect(status == 0)
        #expect(buffer.standardOutput == "flowmeter 9.9.9\nallocator: test 1.0\n")
        let help = CommandOutputBuffer()
        _ = await runner.run(["--help"], environment: [:], output: CommandOutput(buffer: help))
        #expect(!help.standardOutput.contains("allocator:"))
    }
}
