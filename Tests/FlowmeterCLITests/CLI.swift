import FlowmeterCLI
import Foundation
import Testing

/// Runs the `flowmeter` command tree in-process and captures what it prints.
enum CLI {
    /// What one run printed and returned.
    struct Result {
        var status: Int32
        var standardOutput: String
        var standardError: String
    }

    /// Runs `arguments` with `environment` (empty by default, so no `FLOWMETER_*` of the host leaks in).
    static func run(_ arguments: [String], environment: [String: String] = [:]) async -> Result {
        let buffer = CommandOutputBuffer()
        let status = await CommandRunner(root: FlowmeterCommands.root, version: FlowmeterCommands.version)
            .run(arguments, environment: environment, output: CommandOutput(buffer: buffer))
        return Result(status: status, standardOutput: buffer.standardOutput, standardError: buffer.standardError)
    }

    /// The parsed JSON object a run printed.
    static func json(_ result: Result) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8))
        return try #require(object as? [String: Any], "not a JSON object: \(result.standardOutput)")
    }

    /// The checked-in fixture `name`'s path.
    static func fixture(_ name: String) throws -> String {
        let directory = try #require(Bundle.module.url(forResource: "Fixtures", withExtension: nil))
        return directory.appendingPathComponent(name).path
    }

    /// The checked-in fixture `name`'s text.
    static func fixtureText(_ name: String) throws -> String {
        try String(contentsOfFile: try fixture(name), encoding: .utf8)
    }
}
