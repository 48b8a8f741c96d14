import FlowmeterModels

/// `flowmeter top`: the most frequent diagnostics by kind, widget type and app version, with the trend against the
/// previous window of the same length.
enum TopCommand {
    static var command: Command {
        Command(
            name: "top",
            abstract: "The most frequent diagnostics by kind, type and version, with their trend.",
            discussion: """
                TREND compares each row with the window of the same length just before (new: none before).
                Release builds only unless --include-debug. Exit status: 0, 1 error, 2 usage error.
                """,
            options: QueryOptions.common() + [
                .value(
                    "kind", "KIND", help: "Only this kind (unknownType, malformedPayload, …); repeatable.",
                    repeatable: true),
                .value("limit", "N", help: "Most rows to print (0: all).", default: "20"),
                .flag("include-debug", help: "Count debug builds too."),
            ],
            run: { arguments in try await run(arguments) }
        )
    }

    private static func run(_ arguments: ParsedArguments) async throws -> Int32 {
        let format = try OutputFormat.parse(arguments)
        let window = try QueryOptions.window(arguments)
        let appID = QueryOptions.appID(arguments)
        let kindNames = arguments.values("kind").filter { !$0.isEmpty }
        let kinds = kindNames.isEmpty ? nil : Set(kindNames.compactMap { DiagnosticKind(rawValue: $0) })
        let limit =
            try arguments.parsed("limit", as: "a whole number ≥ 0") { Int($0).flatMap { $0 >= 0 ? $0 : nil } }
            ?? 20
        let includeDebug = arguments.flag("include-debug")
        let owners = try OwnerOptions.rules(arguments)
        let team = try OwnerOptions.team(arguments, rules: owners)
        let store = try QueryOptions.openStore(arguments)
        var (report, freshness) = try await QueryOptions.read {
            let freshness = try FreshnessNote.load(store, window: window)
            let report = try TopReport.load(
                reader: store, window: window, appID: appID, kinds: kinds, includeDebug: includeDebug,
                limit: team == nil && arguments.appScope == nil ? limit : 0)
            return (report, freshness)
        }
        if team != nil || arguments.appScope != nil {
            // Filtered before the limit, so --limit counts the team's (and the read key's) rows.
            report.rows.removeAll {
                !arguments.mayRead($0.appID)
                    || !OwnerOptions.keeps(team, rules: owners, appID: $0.appID, widgetType: $0.widgetType)
            }
            report.totalGroups = report.rows.count
            if limit > 0 && report.rows.count > limit { report.rows.removeLast(report.rows.count - limit) }
        }
        let final = report
        format.print(
            to: arguments.output, json: { final.jsonValue },
            csv: {
                var csv = CSVTable(header: [
                    "appID", "kind", "widgetType", "appVersion", "events", "installs", "previousEvents", "change",
                ])
                for row in final.rows {
                    csv.rows.append([
                        row.appID, row.kind.rawValue, row.widgetType, row.appVersion, String(row.events),
                        String(row.installs), String(row.previousEvents), row.change.map { String($0) } ?? "",
                    ])
                }
                return csv
            }, table: { table(final, style: $0) }, freshness: freshness)
        return 0
    }

    static func table(_ report: TopReport, style: @escaping (String) -> String) -> String {
        let window = "\(CellFormat.time(report.window.from)) – \(CellFormat.time(report.window.to)) UTC"
        guard !report.rows.isEmpty else { return "No diagnostics (\(window))." }
        var table = TextTable(columns: [
            .text("KIND"), .text("TYPE", flexible: true, shrinkPriority: -1),
            .text("APP", flexible: true, shrinkPriority: 1),
            .text("VERSION", flexible: true), .number("EVENTS"), .number("INSTALLS"), .number("TREND"),
        ])
        for row in report.rows {
            table.append([
                row.kind.rawValue, row.widgetType.isEmpty ? "-" : row.widgetType, row.appID, row.appVersion,
                String(row.events), String(row.installs),
                CellFormat.trend(current: row.events, previous: row.previousEvents),
            ])
        }
        let app = table.removeColumnIfUniform("APP").map { " in " + Terminal.name($0) } ?? ""
        let footer = """
            \(report.rows.count) of \(report.totalGroups) groups\(app) (\(window)).
            TREND: against the previous \(Self.length(report.window.seconds)).
            """
        return table.renderedGrouped(by: "APP", style: style) + "\n\n" + footer
    }

    /// `24h`, `90m`, `7d`: the window's length as the user would write it.
    static func length(_ seconds: Int64) -> String {
        if seconds % 86_400 == 0 { return "\(seconds / 86_400)d" }
        if seconds % 3600 == 0 { return "\(seconds / 3600)h" }
        if seconds % 60 == 0 { return "\(seconds / 60)m" }
        return "\(seconds)s"
    }
}
