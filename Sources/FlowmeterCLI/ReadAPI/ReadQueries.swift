import Collector
import Foundation

/// The read API's queries (docs/api.md#reading), answered by the same commands as the CLI: a request's query parameters
/// become the command's options, the command runs in process with its output in a buffer, and the answer is what
/// `flowmeter <query> --format json` prints, limited to the apps the key may read.
///
/// There is one implementation: a query's options are parsed, validated and run by the command itself, so the
/// CLI and the API cannot disagree. The command reads the store through its own connection (the store URL
/// `serve` was given), as the CLI does beside a running `serve`.
struct ReadQueries: Sendable {
    /// Where the queries read: `serve`'s `--store`.
    let storeURL: String
    /// `serve`'s `--owners` file, for `team`; nil when it has none.
    let ownersPath: String?

    /// The queries and the command each runs (its path under `flowmeter`).
    static let commands: [String: [String]] = [
        "top": ["top"], "spikes": ["spikes"], "ungated": ["ungated"], "gates": ["gates"],
        "versions": ["versions"], "types": ["types"], "deploys": ["deploys", "list"],
        "manifests": ["manifests", "list"], "report": ["report"],
    ]

    /// Queries the console reads that the read API does not serve (docs/api.md#reading names its list): manifest drift.
    static let consoleCommands: [String: [String]] = ["manifest-drift": ["manifests", "check"]]

    /// The query parameters the API takes (docs/api.md#reading); `week` and `format` for the report only.
    static let parameters: Set<String> = ["since", "from", "to", "app", "kind", "team", "limit"]

    /// The outcome of one query.
    enum Answer: Sendable {
        /// The command's output and its content type.
        case ok(body: String, contentType: String)
        /// A parameter at fault (docs/api.md#ingest's `path`), with the command's message: 400.
        case badRequest(parameter: String, message: String)
        /// The key may not read the app it asked for: 403.
        case forbidden(String)
        /// The query failed (the store could not be read): 503.
        case failed(String)
    }

    /// Runs `query` with `parameters` for a key with `access` (not `.none`).
    func answer(
        _ query: String, parameters given: [(name: String, value: String?)], access: IngestKeys.ReadAccess
    ) async -> Answer {
        guard let path = Self.commands[query] ?? Self.consoleCommands[query] else {
            return .badRequest(parameter: "query", message: "No such query: \(query).")
        }
        let allowed = query == "report" ? Self.parameters.union(["week", "format"]) : Self.parameters
        var words: [String] = []
        var app: String?
        var format = "json"
        for (name, value) in given {
            guard allowed.contains(name) else {
                return .badRequest(parameter: name, message: "Unknown parameter '\(name)'.")
            }
            guard let value, !value.isEmpty else {
                return .badRequest(parameter: name, message: "Parameter '\(name)' needs a value.")
            }
            if name == "app" { app = value }
            if name == "format" {
                format = value
                continue
            }
            words += ["--\(name)", value]
        }
        var scope: Set<String>?
        switch access {
        case .none: return .forbidden("This key may read nothing.")
        case .all: scope = nil
        case .apps(let apps, _):
            if let app, !apps.contains(app) { return .forbidden("This key may not read \(app).") }
            scope = apps
            if app == nil && query == "report" {
                // The weekly report is built for one app or for all; a key for several apps names one.
                guard apps.count == 1, let only = apps.first else {
                    return .badRequest(parameter: "app", message: "Name the app: this key reads several.")
                }
                words += ["--app", only]
            }
        }
        if query == "report" {
            guard ["json", "md", "html"].contains(format) else {
                return .badRequest(parameter: "format", message: "format must be json, md or html.")
            }
            // The week's own message names no option: checked here, so the 400 names it.
            if let week = given.last(where: { $0.name == "week" })?.value {
                do {
                    _ = try ISOWeek(parsing: week)
                } catch {
                    return .badRequest(parameter: "week", message: error.message)
                }
            }
        }
        words += ["--format", format, "--store", storeURL]
        if let ownersPath, given.contains(where: { $0.name == "team" }) { words += ["--owners", ownersPath] }
        return await run(path, words, scope: scope, format: format)
    }

    private func run(_ path: [String], _ words: [String], scope: Set<String>?, format: String) async -> Answer {
        var command = FlowmeterCommands.root
        for word in path {
            guard let next = command.subcommand(named: word) else { return .failed("No such command.") }
            command = next
        }
        guard let work = command.run else { return .failed("No such command.") }
        let buffer = CommandOutputBuffer()
        do {
            var arguments = try ArgumentParser.parse(
                words, for: command, commandPath: "flowmeter " + path.joined(separator: " "), environment: [:])
            arguments.output = CommandOutput(buffer: buffer)
            arguments.appScope = scope
            _ = try await work(arguments)
        } catch let error as CommandUsageError {
            return .badRequest(parameter: Self.option(in: error.message), message: Self.apiWording(error.message))
        } catch {
            return .failed("The query could not be answered; retry later.")
        }
        let contentType =
            switch format {
            case "html": "text/html; charset=utf-8"
            case "md": "text/markdown; charset=utf-8"
            default: "application/json"
            }
        return .ok(body: buffer.standardOutput, contentType: contentType)
    }

    /// The option a usage error names (`--since` in "invalid value 'x' for --since: …"), as a parameter name.
    static func option(in message: String) -> String {
        guard let range = message.range(of: "--") else { return "" }
        let name = message[range.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "-" }
        return String(name)
    }

    /// A usage error in the API's words: parameters rather than command-line options.
    static func apiWording(_ message: String) -> String {
        var text = message
        for name in parameters.union(["week", "format"]) {
            text = text.replacingOccurrences(of: "--\(name)", with: "'\(name)'")
        }
        return text
    }
}
