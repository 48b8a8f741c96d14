import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Writing to the user's terminal: colour only when standard output is a terminal and `NO_COLOR` is unset.
enum Terminal {
    static let isInteractive: Bool = isatty(STDOUT_FILENO) == 1
    static let usesColor: Bool = isInteractive && ProcessInfo.processInfo.environment["NO_COLOR"] == nil

    enum Style: String {
        case bold = "1"
        case dim = "2"
        case red = "31"
        case green = "32"
        case yellow = "33"
        case cyan = "36"
    }

    /// `text` in `style` when colour is on, else unchanged.
    static func styled(_ text: String, _ style: Style) -> String {
        styled(text, style, when: usesColor)
    }

    /// `text` wrapped in `style`'s escape codes when `isOn`, else unchanged; the one place the codes are written.
    static func styled(_ text: String, _ style: Style, when isOn: Bool) -> String {
        isOn ? "\u{1B}[\(style.rawValue)m\(text)\u{1B}[0m" : text
    }

    /// A section heading such as `==> posting traffic`.
    static func heading(_ text: String) {
        print(styled("==> ", .cyan) + styled(text, .bold))
    }

    /// Rewrites the current line with a progress bar on a terminal; prints nothing otherwise, except at completion.
    static func progress(_ label: String, done: Int, of total: Int) {
        let width = 30
        let filled = total > 0 ? min(width, done * width / total) : width
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        let line = "    \(label) [\(bar)] \(done)/\(total)"
        if isInteractive {
            FileHandle.standardOutput.write(Data(("\r" + line + (done >= total ? "\n" : "")).utf8))
        } else if done >= total {
            print(line)
        }
    }
}
