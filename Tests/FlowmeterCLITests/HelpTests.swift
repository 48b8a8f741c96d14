import Testing

/// The help text is the CLI's documentation on the terminal: pinned, so a change to it is a deliberate one.
///
/// To update after an intended change, run the command and copy its output into the fixture.
@Suite struct HelpTests {
    @Test(arguments: [
        (["--help"], "help-flowmeter.txt"), (["ungated", "--help"], "help-ungated.txt"),
        (["check", "--help"], "help-check.txt"),
    ])
    func helpMatchesTheGoldenText(arguments: [String], fixture: String) async throws {
        let result = await CLI.run(arguments)
        #expect(result.status == 0)
        let expected = try CLI.fixtureText(fixture)
        #expect(result.standardOutput == expected, "\(arguments) help changed:\n\(result.standardOutput)")
    }

    @Test(arguments: ["top", "spikes", "ungated", "versions", "types", "check"])
    func everyQueryDocumentsTheSharedOptionsWithinEightyColumns(command: String) async {
        let result = await CLI.run([command, "--help"])
        #expect(result.status == 0)
        for option in ["--format FORMAT", "--since DURATION", "--from TIME", "--to TIME", "--app APPID", "--store"] {
            #expect(result.standardOutput.contains(option), "\(command) lacks \(option)")
        }
        #expect(result.standardOutput.contains("(default: table)"))
        #expect(result.standardOutput.contains("(default: flowmeter.sqlite)"))
        for line in result.standardOutput.split(separator: "\n") {
            #expect(line.count <= 80, "\(command): \(line)")
        }
    }

    @Test func helpSubcommandMatchesDashDashHelp() async {
        let viaWord = await CLI.run(["help", "top"])
        let viaFlag = await CLI.run(["top", "--help"])
        #expect(viaWord.standardOutput == viaFlag.standardOutput)
    }
}
