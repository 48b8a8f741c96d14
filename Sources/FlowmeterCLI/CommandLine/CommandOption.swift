/// One option a command accepts: `--name VALUE` or a `--name` flag, with its help text and default.
///
/// Every option also reads from the environment as `FLOWMETER_<NAME>` (upper-cased, dashes as underscores), so a
/// container can configure the collector without a command line. A command line value beats the environment, which
/// beats a configuration file, which beats the default.
public struct CommandOption: Sendable, Hashable {
    /// The long name without dashes, such as `listen`.
    public var name: String
    /// The placeholder shown in help for the value, such as `HOST:PORT`; nil for a flag that takes no value.
    public var valueName: String?
    /// One line of help; the default is appended by the help renderer.
    public var help: String
    /// The value used when the option is given nowhere; nil when there is none.
    public var defaultValue: String?
    /// Whether the option may be given more than once, collecting every value.
    public var isRepeatable: Bool
    /// Whether the value is a secret (a salt, an admin key): given on the command line, where every local user can
    /// read it (`ps`, `/proc/<pid>/cmdline`), it is taken with a loud warning; the environment or a file is the way.
    public var isSecret = false
    /// Whether each value is a `KEY=VALUE` pair of an open set of keys (librdkafka's properties): the values from the
    /// configuration file, the environment and the command line are all kept, in that order, so a later one
    /// overrides only the same key. Such an option also reads `FLOWMETER_<NAME>_<KEY>` variables, the key
    /// lower-cased with underscores as dots (`FLOWMETER_KAFKA_OPTION_SASL_USERNAME` sets `sasl.username`).
    public var isKeyValue = false

    /// Creates an option that takes a value.
    public static func value(
        _ name: String, _ valueName: String, help: String, default defaultValue: String? = nil,
        repeatable: Bool = false
    ) -> CommandOption {
        CommandOption(
            name: name, valueName: valueName, help: help, defaultValue: defaultValue, isRepeatable: repeatable)
    }

    /// Creates an option whose value is a secret: read from the environment (`FLOWMETER_<NAME>`) or a file option,
    /// and warned about when given on the command line.
    public static func secret(_ name: String, _ valueName: String, help: String) -> CommandOption {
        var option = CommandOption(name: name, valueName: valueName, help: help, defaultValue: nil, isRepeatable: false)
        option.isSecret = true
        return option
    }

    /// Creates a repeatable `KEY=VALUE` option (see ``isKeyValue``).
    public static func keyValues(_ name: String, _ valueName: String, help: String) -> CommandOption {
        var option = CommandOption(name: name, valueName: valueName, help: help, defaultValue: nil, isRepeatable: true)
        option.isKeyValue = true
        return option
    }

    /// Creates a boolean flag, false unless given.
    public static func flag(_ name: String, help: String) -> CommandOption {
        CommandOption(name: name, valueName: nil, help: help, defaultValue: nil, isRepeatable: false)
    }

    /// Whether this option is a flag that takes no value.
    public var isFlag: Bool { valueName == nil }

    /// The variable help names: ``environmentName``, or for a key-value option the per-key form,
    /// `FLOWMETER_KAFKA_OPTION_<KEY>` (and `FLOWMETER_KAFKA_OPTION_<KEY>_FILE` for its `-file` sibling).
    var helpEnvironmentName: String {
        guard isKeyValue else { return environmentName }
        if environmentName.hasSuffix("_FILE") { return environmentName.dropLast(5) + "_<KEY>_FILE" }
        return environmentName + "_<KEY>"
    }

    /// The environment variable that sets this option.
    public var environmentName: String {
        "FLOWMETER_" + name.uppercased().replacingOccurrences(of: "-", with: "_")
    }
}
