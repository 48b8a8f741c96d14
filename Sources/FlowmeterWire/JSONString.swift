import FlowmeterModels

/// JSON string literals, written in one place for every writer: Kafka values and keys, HTTP bodies, logs, the CLI's
/// JSON output.
///
/// Two strengths. Plain (`displaySafe: false`) escapes what RFC 8259 requires (quote, backslash, U+0000–U+001F)
/// with ``ByteSink``'s escaper, eight bytes at a time: machine-read values on the hot path. Display-safe also writes
/// every character ``DisplaySafety`` flags (DEL, C1 controls, line separators, bidi controls) as `\uXXXX`: the same
/// value for a parser, inert on a terminal or in a log viewer.
public enum JSONString {
    /// Appends `string` as a quoted JSON string literal to `buffer`.
    public static func append(_ string: String, to buffer: inout [UInt8], displaySafe: Bool = false) {
        guard displaySafe && DisplaySafety.needsEscaping(string) else {
            EventRecordWriter.appendSized(ByteSink.maxQuotedLength(string), to: &buffer) { $0.quoted(string) }
            return
        }
        buffer.append(contentsOf: quoted(string, displaySafe: true).utf8)
    }

    /// `string` as a quoted JSON string literal.
    public static func quoted(_ string: String, displaySafe: Bool = false) -> String {
        guard displaySafe && DisplaySafety.needsEscaping(string) else {
            var bytes: [UInt8] = []
            append(string, to: &bytes)
            return String(decoding: bytes, as: UTF8.self)
        }
        var output = "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            default:
                if DisplaySafety.mustEscape(scalar) {
                    let hex = String(scalar.value, radix: 16)
                    output += "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
                } else {
                    output.unicodeScalars.append(scalar)
                }
            }
        }
        return output + "\""
    }
}
