import FlowmeterModels

/// The `flowmeter` command tree; the executable's `main.swift` hands its arguments to this and exits with the result.
public enum FlowmeterCommands {
    /// The version printed by `flowmeter --version` (`flowmeterVersion`, from the shared models).
    public static let version = flowmeterVersion

    /// The root command with every subcommand.
    public static var root: Command {
        Command(
            name: "flowmeter",
            abstract:
                "Collects Flow-UI decode diagnostics, publishes them to Kafka, and finds what backends forgot to gate.",
            subcommands: [
                DemoCommand.command, ServeCommand.command, SinkCommand.command, DeploysCommand.command,
                WatchCommand.command,
                TopCommand.command,
                SpikesCommand.command,
                UngatedCommand.command,
                GatesCommand.command,
                VersionsCommand.command,
                TypesCommand.command,
                CheckCommand.command,
                MatrixCommand.command,
                ManifestsCommand.command,
                SimulateCommand.command,
                ReportCommand.command,
                StoreCommand.command,
                SpoolCommand.command,
            ]
        )
    }

    /// Runs `arguments` (without the executable name) and returns the exit status; `--version` prints
    /// `buildDetails` (the executable's allocator) under the version.
    public static func main(_ arguments: [String], buildDetails: [String] = []) async -> Int32 {
        await CommandRunner(root: root, version: version, buildDetails: buildDetails).run(arguments)
    }
}
