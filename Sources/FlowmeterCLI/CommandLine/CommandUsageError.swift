/// A command line that cannot be understood; printed with the command's usage, and the process exits 2.
public struct CommandUsageError: Error, CustomStringConvertible, Sendable {
    /// What was wrong, in one sentence.
    public var message: String
    /// The command path the error belongs to, such as `flowmeter serve`, for the usage hint.
    public var commandPath: String

    /// Creates a usage error for the command at `commandPath`.
    public init(_ message: String, commandPath: String = "flowmeter") {
        self.message = message
        self.commandPath = commandPath
    }

    public var description: String { message }
}
