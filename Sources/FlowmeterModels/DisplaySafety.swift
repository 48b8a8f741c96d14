/// Which characters of a string from an app must never reach a reader as they are: the one definition that every
/// writer of app-sent text (JSON, logs, terminal tables, CSV, Markdown and HTML reports) escapes by.
///
/// Every ingest key ships inside an app binary, so a widget type, a message or a coding path may be written by an
/// attacker. Each writer keeps such text, but shows the characters below in its own escaped form.
public enum DisplaySafety {
    /// C0 controls, DEL and C1 controls (U+0000–U+001F, U+007F–U+009F): ESC starts a terminal escape sequence, CR and
    /// LF end a log line, NUL ends a C string.
    public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    /// A control character (``isControl(_:)``), a line or paragraph separator (U+2028, U+2029), or a bidirectional
    /// formatting character (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069). Each can end a line, move the
    /// cursor, or make what follows read in another order (CVE-2021-42574), so a writer shows it escaped.
    public static func mustEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: return true
        case 0x061C, 0x200E, 0x200F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }

    /// Whether `text` holds any character that ``mustEscape(_:)``; the fast path for the common clean string.
    public static func needsEscaping(_ text: String) -> Bool {
        text.unicodeScalars.contains(where: mustEscape)
    }
}
