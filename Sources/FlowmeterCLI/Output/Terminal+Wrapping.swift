extension Terminal {
    /// `text` broken at spaces into lines of at most 80 characters, each starting with `indent`.
    static func wrapped(_ text: String, indent: String, width: Int = 80) -> [String] {
        var lines: [String] = []
        var current = indent
        for word in text.split(separator: " ") {
            let (used, needed) = (Terminal.columns(current), Terminal.columns(String(word)))
            if used > Terminal.columns(indent) && used + 1 + needed > width {
                lines.append(current)
                current = indent + "  "
            }
            if current.count > indent.count && !current.hasSuffix("  ") { current += " " }
            current += word
        }
        lines.append(current)
        return lines
    }
}
