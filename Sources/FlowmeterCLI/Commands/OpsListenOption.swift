import Collector

/// `--ops-listen HOST:PORT` of `flowmeter sink` and `flowmeter watch` (docs/api.md): where `/healthz`, `/readyz`
/// and `/metrics` are served.
enum OpsListenOption {
    /// The option.
    static let option = CommandOption.value(
        "ops-listen", "HOST:PORT", help: "Serve /healthz, /readyz and /metrics here (none by default).")

    /// The address given, or nil when the option is absent or empty.
    static func address(_ arguments: ParsedArguments) throws(CommandUsageError) -> CollectorConfiguration.ListenAddress?
    {
        guard let text = arguments.value("ops-listen"), !text.isEmpty else { return nil }
        guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]) else {
            throw CommandUsageError(
                "invalid value '\(text)' for --ops-listen: expected HOST:PORT", commandPath: arguments.commandPath)
        }
        let host = String(text[..<colon]).trimmingCharacters(in: ["[", "]"])
        return CollectorConfiguration.ListenAddress(host: host, port: port)
    }
}
