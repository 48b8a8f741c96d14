import FlowmeterModels

/// App-sent text on the operator's terminal: shown escaped, measured in columns, cut to fit.
extension Terminal {
    /// `text` with every character ``DisplaySafety/mustEscape(_:)`` flags written as a Swift-style escape (`\u{1B}`,
    /// `\u{A}`, `\u{202E}`), so a widget type, a message or an error quoting either cannot move the cursor, recolour
    /// the terminal, start a new line or reorder the rest of it. Other text, backslashes included, is unchanged.
    static func printable(_ text: String) -> String {
        guard DisplaySafety.needsEscaping(text) else { return text }
        var output = ""
        for scalar in text.unicodeScalars {
            if DisplaySafety.mustEscape(scalar) {
                output += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else {
                output.unicodeScalars.append(scalar)
            }
        }
        return output
    }

    /// The most columns a name printed whole (a heading, a verdict line) may take. Ingest caps identifiers at 256
    /// characters (`widgetType` at 128), so only a store written some other way holds a longer one; it is cut here
    /// rather than flooding the terminal.
    static let longestName = 300

    /// `text` as a name printed whole: escaped, and cut at ``longestName`` columns.
    static func name(_ text: String) -> String {
        truncated(text, toColumns: longestName)
    }

    /// How many terminal columns `text` takes: two for East Asian wide and fullwidth characters and emoji, none for
    /// combining marks and other zero-width characters, one for the rest. The same approximation as `wcwidth`, per
    /// grapheme cluster; text that ``printable(_:)`` would change has no defined width.
    static func columns(_ text: String) -> Int {
        var total = 0
        for character in text {
            total += columns(character)
        }
        return total
    }

    /// `text` cut to at most `width` columns, the last one an ellipsis when anything was cut; escaped first.
    static func truncated(_ text: String, toColumns width: Int) -> String {
        let text = printable(text)
        guard columns(text) > width else { return text }
        var output = ""
        var used = 0
        let room = width > 1 ? width - 1 : width
        for character in text {
            let needed = columns(character)
            guard used + needed <= room else { break }
            output.append(character)
            used += needed
        }
        return width > 1 ? output + "…" : output
    }

    /// `text` padded with spaces to `width` columns (left-aligned) or right-aligned when `alignsRight`.
    static func padded(_ text: String, toColumns width: Int, alignsRight: Bool = false) -> String {
        let padding = String(repeating: " ", count: max(0, width - columns(text)))
        return alignsRight ? padding + text : text + padding
    }

    private static func columns(_ character: Character) -> Int {
        let scalars = character.unicodeScalars
        if scalars.contains(where: isWide) { return 2 }
        // A text-default emoji made into emoji presentation by U+FE0F (❤️, ☀️) takes two columns too.
        if scalars.contains("\u{FE0F}") && scalars.contains(where: { $0.properties.isEmoji }) { return 2 }
        return scalars.allSatisfy(isZeroWidth) ? 0 : 1
    }

    private static func isWide(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.properties.isEmojiPresentation { return true }
        switch scalar.value {
        case 0x1100...0x115F, 0x2329...0x232A, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
            0xA000...0xA4CF, 0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE10...0xFE19, 0xFE30...0xFE6F,
            0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x2FFFD,
            0x30000...0x3FFFD:
            return true
        default:
            return false
        }
    }

    private static func isZeroWidth(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return true
        // Hangul medial vowels and final consonants join the syllable before them.
        default: return (0x1160...0x11FF).contains(scalar.value)
        }
    }
}
