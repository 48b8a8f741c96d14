/// A node of the `flowmeter` command tree: a runnable command, a group of subcommands, or both.
public struct Command: Sendable {
    /// The word that selects this command, such as `serve`.
    public var name: String
    /// One line saying what the command does, shown in lists and at the top of its help.
    public var abstract: String
    /// Longer help shown below the options: examples, exit codes, what to expect.
    public var discussion: String?
    /// Placeholders for positional arguments in the usage line, such as `PAYLOAD.json`.
    public var positionalUsage: String?
    /// The options this command accepts.
    public var options: [CommandOption]
    /// Subcommands selected by the next word.
    public var subcommands: [Command]
    /// The work; returns the process exit status. Nil for a pure group, which prints its help.
    public var run: (@Sendable (ParsedArguments) async throws -> Int32)?

    /// Creates a command.
    public init(
        name: String, abstract: String, discussion: String? = nil, positionalUsage: String? = nil,
        options: [CommandOption] = [], subcommands: [Command] = [],
        run: (@Sendable (ParsedArguments) async throws -> Int32)? = nil
    ) {
        self.name = name
        self.abstract = abstract
        self.discussion = discussion
        self.positionalUsage = positionalUsage
        self.options = options
        self.subcommands = subcommands
        self.run = run
    }

    /// The subcommand with this name, if any.
    func subcommand(named word: String) -> Command? {
        subcommands.first { $0.name == word }
    }
}
