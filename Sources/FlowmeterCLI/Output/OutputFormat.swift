import Detector

/// How a query prints its result: an aligned table for people, JSON or CSV for programs.
enum OutputFormat: String, CaseIterable, Sendable {
    /// Columns that fit an 80-column terminal; colour only on a terminal.
    case table
    /// One JSON document; keys in a fixed, documented order.
    case json
    /// RFC 4180: a header row, fields quoted where needed, CRLF line ends.
    case csv

    /// The `--format` option every query declares.
    static let option = CommandOption.value("format", "FORMAT", help: "table | json | csv.", default: "table")

    /// The `--format` value, or a usage error naming the accepted values.
    static func parse(_ arguments: ParsedArguments) throws(CommandUsageError) -> OutputFormat {
        try arguments.parsed("format", as: "table, json or csv") { OutputFormat(rawValue: $0) } ?? .table
    }
}

extension OutputFormat {
    /// Prints a query's result with the store's freshness: a `freshness` key added to the JSON, a footer line after
    /// the table, nothing in the CSV (which stays one table); its warning, if any, goes to standard error whatever
    /// the format.
    func print(
        to output: CommandOutput, json: () -> JSONValue, csv: () -> CSVTable,
        table: (_ style: @escaping (String) -> String) -> String, freshness: FreshnessNote?
    ) {
        if let warning = freshness?.warning { output.printError(warning) }
        print(
            to: output, json: { (freshness?.appended(to: json()) ?? json()).serialized(prettyPrinted: true) },
            csv: csv, table: { style in table(style) + (freshness.map { "\n" + $0.text } ?? "") })
    }

    /// Prints a query's result in this format: the JSON as given, the CSV rendered (escaped on a terminal), or the
    /// table with headings bold on a terminal. Each rendering is made only when it is the one asked for.
    func print(
        to output: CommandOutput, json: () -> String, csv: () -> CSVTable,
        table: (_ style: @escaping (String) -> String) -> String
    ) {
        switch self {
        case .json: output.print(json())
        case .csv: output.print(csv().rendered(forTerminal: output.isTerminal))
        case .table: output.print(table({ output.styled($0, .bold) }))
        }
    }
}
