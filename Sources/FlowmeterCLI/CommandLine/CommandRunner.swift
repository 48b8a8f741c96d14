public import Foundation

/// Parses a command line against a command tree, prints help and usage errors, and runs the selected command.
///
/// Exit statuses follow CONTRACT §5: the command's own status on success, 1 on an error, 2 on a usage error.
public struct CommandRunner: Sendable {
    /// The root of the tree, named after the executable.
    public let root: Command
    /// The version printed by `--version`.
    public let version: String

    /// Creates a runner for `root`.
    public init(root: Command, version: String) {
        self.root = root
        self.version = version
    }

    /// Runs the command line `arguments` (without the executable name) and returns the exit status.
    public func run(
        _ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment
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
            print(HelpRenderer.help(for: target))
            return 0
        }
        let command = path.last!
        let commandPath = path.map(\.name).joined(separator: " ")
        if rest.contains("--help") || rest.contains("-h") {
            print(HelpRenderer.help(for: path))
            return 0
        }
        if path.count == 1 && rest.first == "--version" {
            print("flowmeter \(version)")
            return 0
        }
        guard let work = command.run else {
            if let word = rest.first {
                return usageFailure(
                    CommandUsageError("unknown command '\(word)'", commandPath: commandPath), path: path)
            }
            print(HelpRenderer.help(for: path))
            return 0
        }
        do {
            let parsed = try ArgumentParser.parse(
                Array(rest), for: command, commandPath: commandPath, environment: environment)
            return try await work(parsed)
        } catch let error as CommandUsageError {
            return usageFailure(error, path: path)
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            return 1
        }
    }

    private func usageFailure(_ error: CommandUsageError, path: [Command]) -> Int32 {
        let text = """
            error: \(error.message)
            \(HelpRenderer.usageLine(for: path))
            See '\(path.map(\.name).joined(separator: " ")) --help'.

            """
        FileHandle.standardError.write(Data(text.utf8))
        return 2
    }
}
