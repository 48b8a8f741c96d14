/// Renders rows as RFC 4180 CSV: a header row, CRLF line ends, and fields quoted when they hold a comma, a quote,
/// or a line break (quotes doubled inside).
struct CSVTable {
    /// The header row's field names.
    var header: [String]
    /// The data rows, each as long as the header.
    var rows: [[String]] = []

    /// The whole document, ending with CRLF.
    func rendered() -> String {
        ([header] + rows).map { $0.map(Self.field).joined(separator: ",") + "\r\n" }.joined()
    }

    static func field(_ value: String) -> String {
        let needsQuotes = value.contains { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }
        guard needsQuotes else { return value }
        return "\"" + value.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
