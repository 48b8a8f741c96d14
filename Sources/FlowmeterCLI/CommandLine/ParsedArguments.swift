/// The values of one command's options after parsing, with the environment and configuration file folded in.
public struct ParsedArguments: Sendable {
    /// The command path, such as `flowmeter serve`, for error messages.
    public let commandPath: String
    /// Positional arguments in order.
    public let positionals: [String]
    let options: [String: CommandOption]
    let values: [String: [String]]
    /// The secret options given on the command line itself (not the environment or a file), by name.
    public internal(set) var secretsOnCommandLine: [String] = []
    /// Where the command writes: standard output and error, or a test's buffer.
    public internal(set) var output: CommandOutput = .standard
    /// The apps whose findings a query may show: nil for every app (the command line); the read API's key scope
    /// otherwise (docs/api.md#reading), applied by each query where it filters by `--team`.
    var appScope: Set<String>?

    /// Whether the query may show a finding of `appID` (``appScope``).
    func mayRead(_ appID: String) -> Bool {
        appScope?.contains(appID) ?? true
    }

    /// The option's value from the command line, the environment, the configuration file, or its default.
    public func value(_ name: String) -> String? {
        precondition(options[name] != nil, "option --\(name) is not declared by \(commandPath)")
        return values[name]?.last ?? options[name]?.defaultValue
    }

    /// Every value given for a repeatable option, or its default as a single value.
    public func values(_ name: String) -> [String] {
        precondition(options[name] != nil, "option --\(name) is not declared by \(commandPath)")
        if let given = values[name], !given.isEmpty { return given }
        return options[name]?.defaultValue.map { [$0] } ?? []
    }

    /// Whether a flag was given (or set to a true value in the environment).
    public func flag(_ name: String) -> Bool {
        guard let raw = values[name]?.last else { return false }
        return ["1", "true", "yes", "on", ""].contains(raw.lowercased())
    }

    /// Whether the option was given anywhere (command line, environment or configuration file).
    public func isSet(_ name: String) -> Bool { values[name] != nil }

    /// The option's value, or a usage error naming it when it is missing.
    public func required(_ name: String) throws(CommandUsageError) -> String {
        guard let value = value(name), !value.isEmpty else {
            throw CommandUsageError("missing required option --\(name)", commandPath: commandPath)
        }
        return value
    }

    /// The option's value converted by `transform`, or a usage error that quotes the bad value.
    public func parsed<T>(
        _ name: String, as what: String, _ transform: (String) -> T?
    ) throws(CommandUsageError) -> T? {
        guard let raw = value(name) else { return nil }
        guard let result = transform(raw) else {
            throw CommandUsageError("invalid value '\(raw)' for --\(name): expected \(what)", commandPath: commandPath)
        }
        return result
    }
}
