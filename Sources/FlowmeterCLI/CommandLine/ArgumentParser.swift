import Detector
import Foundation

/// Turns argument words into `ParsedArguments`, folding in the environment and an optional JSON configuration file.
enum ArgumentParser {
    /// Parses `words` for `command`. A `--config FILE` option, when the command declares one, names a JSON object whose
    /// keys are option names (`{"listen": "0.0.0.0:8080", "max-body-bytes": 1048576}`).
    static func parse(
        _ words: [String], for command: Command, commandPath: String, environment: [String: String]
    ) throws(CommandUsageError) -> ParsedArguments {
        let options = Dictionary(command.options.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var given: [String: [String]] = [:]
        var positionals: [String] = []
        var index = 0
        var onlyPositionals = false
        while index < words.count {
            let word = words[index]
            index += 1
            if onlyPositionals || !word.hasPrefix("--") || word == "-" {
                if word.hasPrefix("-") && word != "-" && !onlyPositionals {
                    throw CommandUsageError("unknown option '\(word)'", commandPath: commandPath)
                }
                positionals.append(word)
                continue
            }
            if word == "--" {
                onlyPositionals = true
                continue
            }
            var name = String(word.dropFirst(2))
            var inlineValue: String?
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            guard let option = options[name] else {
                let hint = suggestion(for: name, among: Array(options.keys)).map { " (did you mean --\($0)?)" } ?? ""
                throw CommandUsageError("unknown option '--\(name)'\(hint)", commandPath: commandPath)
            }
            if option.isFlag {
                given[name, default: []].append(inlineValue ?? "true")
                continue
            }
            let value: String
            if let inlineValue {
                value = inlineValue
            } else if index < words.count {
                value = words[index]
                index += 1
            } else {
                throw CommandUsageError(
                    "option --\(name) needs a value (\(option.valueName!))", commandPath: commandPath)
            }
            if option.isRepeatable {
                given[name, default: []].append(value)
            } else {
                given[name] = [value]
            }
        }

        if command.positionalUsage == nil, let stray = positionals.first {
            throw CommandUsageError("unexpected argument '\(stray)'", commandPath: commandPath)
        }

        var merged: [String: [String]] = [:]
        if options["config"] != nil, let path = given["config"]?.last ?? environment["FLOWMETER_CONFIG"] {
            merged = try configurationFile(at: path, options: options, commandPath: commandPath)
        }
        for option in command.options {
            if let raw = environment[option.environmentName] {
                merged[option.name] = option.isRepeatable ? raw.split(separator: ",").map(String.init) : [raw]
            }
        }
        merged.merge(given) { _, commandLine in commandLine }
        var parsed = ParsedArguments(
            commandPath: commandPath, positionals: positionals, options: options, values: merged)
        parsed.secretsOnCommandLine = command.options.filter { $0.isSecret && given[$0.name] != nil }.map(\.name)
        return parsed
    }

    private static func configurationFile(
        at path: String, options: [String: CommandOption], commandPath: String
    ) throws(CommandUsageError) -> [String: [String]] {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw CommandUsageError("cannot read configuration file '\(path)'", commandPath: commandPath)
        }
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw CommandUsageError(
                "configuration file '\(path)' is not a JSON object of option names", commandPath: commandPath)
        }
        var values: [String: [String]] = [:]
        for (key, raw) in object {
            guard options[key] != nil, key != "config" else {
                throw CommandUsageError(
                    "configuration file '\(path)': unknown option '\(key)'", commandPath: commandPath)
            }
            switch raw {
            case let list as [Any]: values[key] = list.map { "\($0)" }
            case let flag as Bool: values[key] = [flag ? "true" : "false"]
            default: values[key] = ["\(raw)"]
            }
        }
        return values
    }

    /// The declared option closest to a misspelled one, when it is within two edits.
    static func suggestion(for name: String, among candidates: [String]) -> String? {
        let scored = candidates.map { ($0, EditDistance.damerauLevenshtein(name, $0)) }.filter { $0.1 <= 2 }
        return scored.min { $0.1 < $1.1 }?.0
    }
}
