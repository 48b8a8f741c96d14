/// Renders rows as RFC 4180 CSV: a header row, CRLF line ends, and fields quoted when they hold a comma, a quote,
/// or a line break (quotes doubled inside).
///
/// Fields are app-sent text, and a spreadsheet runs a cell that starts with `=`, `+`, `-` or `@` (a tab, a carriage
/// return or NUL first can hide one) as a formula. Such a field is written the way OWASP's "CSV Injection" page
/// recommends: a single quote (`'`) prepended and the whole field quoted, so `=HYPERLINK(…)` arrives as the text
/// `'=HYPERLINK(…)`. Other characters are kept as they are (CSV is for programs, which get the stored value), except
/// on a terminal.
/// A field that is a plain number (`-12`, `-0.25`, `+3`, `-1.5e-7`) is left as it is: a negative count or change is
/// data, not a formula, and a program reading the CSV gets the number.
struct CSVTable {
    /// The header row's field names.
    var header: [String]
    /// The data rows, each as long as the header.
    var rows: [[String]] = []

    /// The whole document, ending with CRLF. `forTerminal` shows every field escaped (``Terminal/printable(_:)``), for
    /// a person reading CSV on a terminal, where an escape sequence in a value would act; a pipe or a file gets the
    /// values as they are.
    func rendered(forTerminal: Bool = false) -> String {
        let field = forTerminal ? { Self.field(Terminal.printable($0)) } : Self.field
        return ([header] + rows).map { $0.map(field).joined(separator: ",") + "\r\n" }.joined()
    }

    /// One field: neutralized when a spreadsheet would run it, quoted when RFC 4180 needs it or when neutralized.
    static func field(_ value: String) -> String {
        let isFormula = startsFormula(value)
        let needsQuotes =
            isFormula || value.unicodeScalars.contains { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }
        guard needsQuotes else { return value }
        let text = isFormula ? "'" + value : value
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// Whether a spreadsheet would read `value` as a formula: it starts with `=`, `+`, `-`, `@`, a tab, a carriage
    /// return or NUL (the set of OWASP's CSV Injection page and ASVS 5.0 V1.2.10), and is not a plain decimal number.
    static func startsFormula(_ value: String) -> Bool {
        guard let first = value.unicodeScalars.first, "=+-@\t\r\u{0}".unicodeScalars.contains(first) else {
            return false
        }
        return !isPlainNumber(value)
    }

    /// `[+-]digits[.digits][e[+-]digits]`, nothing else.
    private static func isPlainNumber(_ value: String) -> Bool {
        var bytes = value.utf8[...]
        if let sign = bytes.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
        func digits() -> Int {
            let count = bytes.prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }.count
            bytes = bytes.dropFirst(count)
            return count
        }
        guard digits() > 0 else { return false }
        if bytes.first == UInt8(ascii: ".") {
            bytes = bytes.dropFirst()
            guard digits() > 0 else { return false }
        }
        if let e = bytes.first, e == UInt8(ascii: "e") || e == UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            if let sign = bytes.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
                bytes = bytes.dropFirst()
            }
            guard digits() > 0 else { return false }
        }
        return bytes.isEmpty
    }
}
