/// Quoting data for HTML and inline SVG: every string that came from an app or a backend passes through here.
enum HTMLEscaping {
    /// `text` safe in element content and in quoted attribute values: `& < > " '` as entities, and control
    /// characters (which HTML and XML reject) as U+FFFD.
    static func escape(_ text: String) -> String {
        var output = ""
        output.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": output += "&amp;"
            case "<": output += "&lt;"
            case ">": output += "&gt;"
            case "\"": output += "&quot;"
            case "'": output += "&#39;"
            case "\t", "\n": output.unicodeScalars.append(" ")
            default:
                if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) {
                    output.unicodeScalars.append("\u{FFFD}")
                } else {
                    output.unicodeScalars.append(scalar)
                }
            }
        }
        return output
    }
}
