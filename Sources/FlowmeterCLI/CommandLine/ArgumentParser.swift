import Detector
import Foundation
import Kafka

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
            guard let raw = environment[option.environmentName] else { continue }
            if option.isKeyValue {
                // A value may hold commas (librdkafka's `debug=broker,security`): pairs are one a line.
                merged[option.name, default: []] += raw.split(separator: "\n").map(String.init)
            } else {
                merged[option.name] = option.isRepeatable ? raw.split(separator: ",").map(String.init) : [raw]
            }
        }
        for (name, pairs) in keyValueEnvironment(environment, options: command.options) {
            merged[name, default: []] += pairs
        }
        for (name, values) in given {
            if options[name]?.isKeyValue == true {
                merged[name, default: []] += values
            } else {
                merged[name] = values
            }
        }
        var parsed = ParsedArguments(
            commandPath: commandPath, positionals: positionals, options: options, values: merged)
        parsed.secretsOnCommandLine = command.options.filter { $0.isSecret && given[$0.name] != nil }.map(\.name)
        // A Kafka password in --kafka-option is as visible in `ps` as a secret option.
        if let pairs = given["kafka-option"],
            pairs.contains(where: { KafkaClientOptions.isSecret(String($0.prefix { $0 != "=" })) })
        {
            parsed.secretsOnCommandLine.append("kafka-option")
        }
        return parsed
    }

    /// The `FLOWMETER_<NAME>_<KEY>` variables of the key-value options, as `key=value` pairs by option name, sorted by
    /// variable name: the key lower-cased with underscores as dots. A variable ending in `_FILE` belongs to the
    /// option's `-file` sibling when there is one (`FLOWMETER_KAFKA_OPTION_SASL_PASSWORD_FILE=/run/secrets/kafka`
    /// is `--kafka-option-file sasl.password=/run/secrets/kafka`); the longest matching prefix wins.
    static func keyValueEnvironment(_ environment: [String: String], options: [CommandOption]) -> [String: [String]] {
        let keyValued = options.filter(\.isKeyValue).sorted { $0.environmentName.count > $1.environmentName.count }
        guard !keyValued.isEmpty else { return [:] }
        let declared = Set(options.map(\.environmentName))
        var pairs: [String: [String]] = [:]
        for (variable, value) in environment.sorted(by: { $0.key < $1.key }) where !declared.contains(variable) {
            guard let option = keyValued.first(where: { variable.hasPrefix($0.environmentName + "_") }) else {
                continue
            }
            var suffix = String(variable.dropFirst(option.environmentName.count + 1))
            var target = option.name
            if suffix.hasSuffix("_FILE"), suffix.count > 5,
                let sibling = keyValued.first(where: { $0.name == option.name + "-file" })
            {
                suffix.removeLast(5)
                target = sibling.name
            }
            guard !suffix.isEmpty else { continue }
            pairs[target, default: []].append(
                suffix.lowercased().replacingOccurrences(of: "_", with: ".") + "=" + value)
        }
        return pairs
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
            if let object = raw as? [String: Any] {
                try objectValue(object, for: key, into: &values, options: options, path: path, commandPath: commandPath)
                continue
            }
            let given: [String]
            switch raw {
            case let list as [Any]: given = list.map { "\($0)" }
            case let flag as Bool: given = [flag ? "true" : "false"]
            default: given = ["\(raw)"]
            }
            if options[key]?.isKeyValue == true {
                values[key, default: []] += given
            } else {
                values[key] = given
            }
        }
        return values
    }

    /// An object in the configuration file: the pairs of a key-value option (`"kafka-option": {"sasl.username": "…"}`),
    /// or, for `kafka`, librdkafka's properties with `bootstrap.servers` as `--kafka` and the rest as `--kafka-option`
    /// (`"kafka": {"bootstrap.servers": "b1:9093", "security.protocol": "SSL"}`), as a Kafka client's own
    /// configuration reads. Any other option takes no object.
    private static func objectValue(
        _ object: [String: Any], for key: String, into values: inout [String: [String]],
        options: [String: CommandOption], path: String, commandPath: String
    ) throws(CommandUsageError) {
        var object = object
        let target: String
        if options[key]?.isKeyValue == true {
            target = key
        } else if key == "kafka", options["kafka-option"] != nil {
            target = "kafka-option"
            if let servers = object.removeValue(forKey: "bootstrap.servers") {
                values["kafka"] = ["\(servers)"]
            }
        } else {
            throw CommandUsageError(
                "configuration file '\(path)': option '\(key)' takes a value, not an object", commandPath: commandPath)
        }
        for (name, value) in object.sorted(by: { $0.key < $1.key }) {
            let text: String
            switch value {
            case let string as String: text = string
            // JSON's true and false arrive as NSNumbers too: told apart by their C type, "c".
            case let number as NSNumber where String(cString: number.objCType) == "c":
                text = number.boolValue ? "true" : "false"
            case let number as NSNumber: text = number.stringValue
            default:
                throw CommandUsageError(
                    "configuration file '\(path)': '\(key).\(name)' must be a string, number or boolean",
                    commandPath: commandPath)
            }
            values[target, default: []].append("\(name)=\(text)")
        }
    }

    /// The declared option closest to a misspelled one, when it is within two edits.
    static func suggestion(for name: String, among candidates: [String]) -> String? {
        let scored = candidates.map { ($0, EditDistance.damerauLevenshtein(name, $0)) }.filter { $0.1 <= 2 }
        return scored.min { $0.1 < $1.1 }?.0
    }
}
