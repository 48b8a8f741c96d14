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
                var words = option.help.split(separator: " ").map(String.init)
                // The default and the variable each stay on one line, so they read (and grep) whole.
                if let defaultValue = option.defaultValue { words.append("(default: \(defaultValue))") }
                words.append("[env: \(option.helpEnvironmentName)]")
                lines += wrap(words: words, indent: 8, first: String(repeating: " ", count: 8))
            }
        }
        lines += ["  -h, --help", "        Show this help."]
        if path.count == 1 { lines += ["  --version", "        Print the version."] }
        if let discussion = command.discussion {
            lines.append("")
            lines += reflow(discussion)
        }
        if !command.subcommands.isEmpty {
            lines += ["", "See '\(path.map(\.name).joined(separator: " ")) <command> --help' for a command's options."]
        }
        return lines.joined(separator: "\n")
    }

    /// Re-wraps a discussion to the help width: lines of a paragraph join and wrap; blank lines separate
    /// paragraphs; a line that starts with a space (an example command) stays exactly as written.
    private static func reflow(_ text: String) -> [String] {
        var lines: [String] = []
        var paragraph: [String] = []
        func flush() {
            if !paragraph.isEmpty { lines += wrap(paragraph.joined(separator: " "), indent: 0, first: "") }
            paragraph = []
        }
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.trimmingCharacters(in: .whitespaces).isEmpty {
                flush()
                lines.append("")
            } else if line.hasPrefix(" ") {
                flush()
                lines.append(String(line))
            } else {
                paragraph.append(String(line))
            }
        }
        flush()
        return lines
    }

    private static func wrap(_ text: String, indent: Int, first: String) -> [String] {
        wrap(words: text.split(separator: " ").map(String.init), indent: indent, first: first)
    }

    private static func wrap(words: [String], indent: Int, first: String) -> [String] {
        var lines: [String] = []
        var current = first
        var currentHasWord = false
        for word in words {
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
