import Foundation

/// Renders help text from the command tree, so every command's help is generated from what it declares.
enum HelpRenderer {
    static let width = 80

    /// The `USAGE:` line for the command at the end of `path`.
    static func usageLine(for path: [Command]) -> String {
        let command = path.last!
        var parts = ["usage:", path.map(\.name).joined(separator: " ")]
        if !command.subcommands.isEmpty && command.run == nil {
            parts.append("<command>")
        }
        if !command.options.isEmpty { parts.append("[options]") }
        if let positional = command.positionalUsage { parts.append(positional) }
        return parts.joined(separator: " ")
    }

    /// The whole help page for the command at the end of `path`.
    static func help(for path: [Command]) -> String {
        let command = path.last!
        var lines = wrap("OVERVIEW: \(command.abstract)", indent: 10, first: "")
        lines += ["", usageLine(for: path).replacingFirst("usage:", with: "USAGE:")]
        if !command.subcommands.isEmpty {
            lines += ["", "COMMANDS:"]
            let nameWidth = (command.subcommands.map(\.name.count).max() ?? 0) + 2
            for sub in command.subcommands {
                lines += wrap(sub.abstract, indent: 2 + nameWidth, first: "  " + sub.name.padded(to: nameWidth))
            }
        }
        lines += ["", "OPTIONS:"]
        do {
            for option in command.options {
                var head = "  --\(option.name)"
                if let valueName = option.valueName { head += " \(valueName)" }
                lines.append(head)
                var text = option.help
                if let defaultValue = option.defaultValue { text += " (default: \(defaultValue))" }
                text += " [env: \(option.environmentName)]"
                lines += wrap(text, indent: 8, first: String(repeating: " ", count: 8))
            }
        }
        lines += ["  -h, --help", "        Show this help."]
        if path.count == 1 { lines += ["  --version", "        Print the version."] }
        if let discussion = command.discussion {
            lines += ["", discussion]
        }
        if !command.subcommands.isEmpty {
            lines += ["", "See '\(path.map(\.name).joined(separator: " ")) <command> --help' for a command's options."]
        }
        return lines.joined(separator: "\n")
    }

    private static func wrap(_ text: String, indent: Int, first: String) -> [String] {
        var lines: [String] = []
        var current = first
        var currentHasWord = false
        for word in text.split(separator: " ") {
            if currentHasWord && current.count + 1 + word.count > width {
                lines.append(current)
                current = String(repeating: " ", count: indent)
                currentHasWord = false
            }
            if currentHasWord { current += " " }
            current += word
            currentHasWord = true
        }
        lines.append(current)
        return lines
    }
}

extension String {
    fileprivate func padded(to width: Int) -> String {
        count >= width ? self + " " : self + String(repeating: " ", count: width - count)
    }

    fileprivate func replacingFirst(_ target: String, with replacement: String) -> String {
        guard let range = range(of: target) else { return self }
        return replacingCharacters(in: range, with: replacement)
    }
}
