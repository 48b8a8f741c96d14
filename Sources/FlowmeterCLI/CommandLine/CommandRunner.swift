public import Foundation

/// Parses a command line against a command tree, prints help and usage errors, and runs the selected command.
///
/// Exit statuses follow docs/api.md#exit-statuses: the command's own status on success, 1 on an error, 2 on a usage
/// error.
public struct CommandRunner: Sendable {
    /// The root of the tree, named after the executable.
    public let root: Command
    /// The version printed by `--version`.
    public let version: String
    /// Lines `--version` prints after the version, such as `allocator: mimalloc 2.0.9`.
    public let buildDetails: [String]

    /// Creates a runner for `root`.
    public init(root: Command, version: String, buildDetails: [String] = []) {
        self.root = root
        self.version = version
        self.buildDetails = buildDetails
    }

    /// Runs the command line `arguments` (without the executable name) and returns the exit status.
    ///
    /// Help, usage errors and errors go to `output`, as does everything a command writes through its
    /// `ParsedArguments.output`; commands that print directly still reach the process's standard output.
    public func run(
        _ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment,
        output: CommandOutput = .standard
    ) async -> Int32 {
        var path = [root]
        var rest = arguments[...]
        while let word = rest.first, let next = path.last!.subcommand(named: word) {
            path.append(next)
            rest = rest.dropFirst()
        }
        if rest.first == "help" && path.count == 1 {
            var target = [root]
            for word in rest.dropFirst() {
                guard let next = target.last!.subcommand(named: word) else { break }
                target.append(next)
            }
            output.print(HelpRenderer.help(for: target))
            return 0
        }
        let command = path.last!
        let commandPath = path.map(\.name).joined(separator: " ")
        if rest.contains("--help") || rest.contains("-h") {
            output.print(HelpRenderer.help(for: path))
            return 0
        }
        if path.count == 1 && rest.first == "--version" {
            output.print("flowmeter \(version)")
            for line in buildDetails { output.print(line) }
            return 0
        }
        guard let work = command.run else {
            if let word = rest.first {
                let hint =
                    ArgumentParser.suggestion(for: word, among: command.subcommands.map(\.name))
                    .map { " (did you mean '\($0)'?)" } ?? ""
                return usageFailure(
                    CommandUsageError("unknown command '\(word)'\(hint)", commandPath: commandPath), path: path,
                    output: output)
            }
            output.print(HelpRenderer.help(for: path))
            return 0
        }
        do {
            var parsed = try ArgumentParser.parse(
                Array(rest), for: command, commandPath: commandPath, environment: environment)
            parsed.output = output
            for name in parsed.secretsOnCommandLine {
                let option = command.options.first { $0.name == name }
                output.printError(
                    "warning: --\(name) was given on the command line, where every user of this machine can read it "
                        + "(ps, /proc/<pid>/cmdline): pass it in \(option.map { $0.environmentName + ($0.isKeyValue ? "_<KEY>" : "") } ?? "the environment")"
                        + (command.options.contains { $0.name == name + "-file" } ? " or with --\(name)-file" : "")
                        + " instead (docs/collector.md, Secrets)")
            }
            return try await work(parsed)
        } catch let error as CommandUsageError {
            return usageFailure(error, path: path, output: output)
        } catch {
            // An error may quote what it read (a stored widget type, a payload path): shown escaped, on one line.
            output.printError("error: " + Terminal.printable(String(describing: error)))
            return 1
        }
    }

    private func usageFailure(_ error: CommandUsageError, path: [Command], output: CommandOutput) -> Int32 {
        let text = """
            error: \(Terminal.printable(error.message))
            \(HelpRenderer.usageLine(for: path))
            See '\(path.map(\.name).joined(separator: " ")) --help'.

            """
        output.printError(text)
        return 2
    }
}
