import FlowmeterModels

/// Quoting data for HTML and inline SVG: every string that came from an app or a backend passes through here.
enum HTMLEscaping {
    /// `text` safe in element content and in quoted attribute values: `& < > " '` as entities, tabs and line breaks
    /// (U+2028 and U+2029 too) as spaces, and every other character ``DisplaySafety`` flags (control characters, which
    /// HTML and XML reject, and bidi overrides, which would reorder the text around them) as U+FFFD.
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
            case "\t", "\n", "\r", "\u{2028}", "\u{2029}": output.unicodeScalars.append(" ")
            default:
                if DisplaySafety.mustEscape(scalar) {
                    output.unicodeScalars.append("\u{FFFD}")
                } else {
                    output.unicodeScalars.append(scalar)
                }
            }
        }
        return output
    }
}
