/// Writing the Prometheus text exposition format 0.0.4: headers, samples, escaping and numbers.
enum PrometheusText {
    /// The `Content-Type` of a scrape answer.
    static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    static func header(name: String, help: String, type: String, into text: inout String) {
        text += "# HELP \(name) \(escapeHelp(help))\n"
        text += "# TYPE \(name) \(type)\n"
    }

    static func sample(name: String, labelNames: [String], values: [String], value: String, into text: inout String) {
        text += name
        if !labelNames.isEmpty {
            text += "{"
            for index in labelNames.indices {
                if index > 0 { text += "," }
                text += labelNames[index]
                text += "=\""
                text += escapeLabelValue(values[index])
                text += "\""
            }
            text += "}"
        }
        text += " "
        text += value
        text += "\n"
    }

    /// HELP text escapes only backslash and newline.
    static func escapeHelp(_ help: String) -> String {
        escape(help, quote: false)
    }

    /// Label values escape backslash, double quote and newline.
    static func escapeLabelValue(_ value: String) -> String {
        escape(value, quote: true)
    }

    // By Unicode scalar, not by Character: "\r\n" is one Character that is not "\n", and a label value from an app
    // holding it would otherwise end the sample line and start a forged one.
    private static func escape(_ text: String, quote: Bool) -> String {
        func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
            scalar == "\\" || scalar == "\n" || (quote && scalar == "\"")
        }
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": escaped += "\\\\"
            case "\n": escaped += "\\n"
            case "\"" where quote: escaped += "\\\""
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    /// Integral values print without a fraction (`3`, not `3.0`); infinities as `+Inf`/`-Inf`; NaN as `NaN`.
    static func format(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value == .infinity { return "+Inf" }
        if value == -.infinity { return "-Inf" }
        if value == value.rounded(.towardZero) && abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }

    /// `[a-zA-Z_:][a-zA-Z0-9_:]*`.
    static func isValidMetricName(_ name: String) -> Bool {
        isValid(name, allowingColon: true)
    }

    /// `[a-zA-Z_][a-zA-Z0-9_]*`, not starting with `__` (reserved for Prometheus).
    static func isValidLabelName(_ name: String) -> Bool {
        isValid(name, allowingColon: false) && !name.hasPrefix("__")
    }

    private static func isValid(_ name: String, allowingColon: Bool) -> Bool {
        guard let first = name.utf8.first else { return false }
        func isLetter(_ byte: UInt8) -> Bool {
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z")) || byte == UInt8(ascii: "_")
                || (allowingColon && byte == UInt8(ascii: ":"))
        }
        guard isLetter(first) else { return false }
        return name.utf8.allSatisfy { isLetter($0) || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) }
    }
}
