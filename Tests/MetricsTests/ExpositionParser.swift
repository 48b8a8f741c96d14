/// A tiny parser for the Prometheus text format, strict enough to catch malformed output in tests.
struct ExpositionParser {
    struct Sample {
        var name: String
        var labels: [String: String]
        var value: Double
    }

    struct ParseError: Error, CustomStringConvertible {
        var line: String
        var reason: String
        var description: String { "\(reason): \(line.debugDescription)" }
    }

    var types: [String: String] = [:]
    var samples: [Sample] = []

    static func parse(_ text: String) throws -> ExpositionParser {
        var result = ExpositionParser()
        guard text.isEmpty || text.hasSuffix("\n") else { throw ParseError(line: text, reason: "no final newline") }
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
            let line = String(line)
            if line.hasPrefix("# HELP ") {
                continue
            } else if line.hasPrefix("# TYPE ") {
                let parts = line.dropFirst(7).split(separator: " ")
                guard parts.count == 2, ["counter", "gauge", "histogram", "summary", "untyped"].contains(parts[1])
                else { throw ParseError(line: line, reason: "bad TYPE") }
                result.types[String(parts[0])] = String(parts[1])
            } else {
                result.samples.append(try sample(line))
            }
        }
        return result
    }

    private static func sample(_ line: String) throws -> Sample {
        var characters = Substring(line)
        var name = ""
        while let character = characters.first, character.isLetter || character.isNumber || "_:".contains(character) {
            name.append(character)
            characters.removeFirst()
        }
        guard !name.isEmpty else { throw ParseError(line: line, reason: "no metric name") }
        var labels: [String: String] = [:]
        if characters.first == "{" {
            characters.removeFirst()
            while characters.first != "}" {
                var label = ""
                while let character = characters.first, character != "=" {
                    label.append(character)
                    characters.removeFirst()
                }
                guard characters.popFirst() == "=", characters.popFirst() == "\"" else {
                    throw ParseError(line: line, reason: "bad label")
                }
                var value = ""
                while let character = characters.popFirst(), character != "\"" {
                    if character == "\\" {
                        switch characters.popFirst() {
                        case "\\": value.append("\\")
                        case "\"": value.append("\"")
                        case "n": value.append("\n")
                        default: throw ParseError(line: line, reason: "bad escape")
                        }
                    } else if character == "\n" {
                        throw ParseError(line: line, reason: "raw newline in label value")
                    } else {
                        value.append(character)
                    }
                }
                guard labels.updateValue(value, forKey: label) == nil else {
                    throw ParseError(line: line, reason: "duplicate label")
                }
                if characters.first == "," { characters.removeFirst() }
                guard characters.first != nil else { throw ParseError(line: line, reason: "unterminated labels") }
            }
            characters.removeFirst()
        }
        guard characters.popFirst() == " " else { throw ParseError(line: line, reason: "no space before value") }
        let value: Double? =
            switch characters {
            case "+Inf": .infinity
            case "-Inf": -.infinity
            case "NaN": .nan
            default: Double(characters)
            }
        guard let value else { throw ParseError(line: line, reason: "bad value") }
        return Sample(name: name, labels: labels, value: value)
    }
}
