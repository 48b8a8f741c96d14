/// `flowmeter types`: each widget type the store knows, per app, with the versions that register or render it.
enum TypesCommand {
    static var command: Command {
        Command(
            name: "types",
            abstract: "Each known widget type and the app versions that register, render or lack it.",
            discussion: """
                A version renders a type when its capability manifest lists it (flowmeter manifests upload); without
                a manifest, when its capabilities register it, or, when it sends no capabilities, when it had
                traffic and reported no unknownType for it (docs/api.md#query-output). FROM says which of the three
                answered for the app's versions. Types only ever reported as unknown are listed with KNOWN = no.
                Exit status: 0, 1 error, 2 usage error.
                """,
            options: QueryOptions.common(since: "7d"),
            run: { arguments in try await run(arguments) }
        )
    }

    private static func run(_ arguments: ParsedArguments) async throws -> Int32 {
        let format = try OutputFormat.parse(arguments)
        let window = try QueryOptions.window(arguments)
        let appID = QueryOptions.appID(arguments)
        let owners = try OwnerOptions.rules(arguments)
        let team = try OwnerOptions.team(arguments, rules: owners)
        let store = try QueryOptions.openStore(arguments)
        let (apps, freshness) = try await QueryOptions.read {
            let freshness = try FreshnessNote.load(store, window: window)
            return (try AppTraffic.load(reader: store, window: window, appID: appID), freshness)
        }
        var report = TypesReport.make(window: window, apps: apps)
        report.rows.removeAll {
            !arguments.mayRead($0.appID)
                || !OwnerOptions.keeps(team, rules: owners, appID: $0.appID, widgetType: $0.widgetType)
        }
        format.print(
            to: arguments.output, json: { report.jsonValue }, csv: { csv(report) },
            table: { table(report, style: $0) }, freshness: freshness)
        return 0
    }

    static func csv(_ report: TypesReport) -> CSVTable {
        var csv = CSVTable(header: [
            "appID", "widgetType", "known", "registeringVersions", "renderingVersions", "unknownIn", "events",
            "sources",
        ])
        for row in report.rows {
            csv.rows.append([
                row.appID, row.widgetType, String(row.isKnown), row.registeringVersions.joined(separator: " "),
                row.renderingVersions.joined(separator: " "), row.unknownIn.joined(separator: " "),
                row.events.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "),
                sourceList(row).map { "\($0.rawValue)=\((row.sources[$0] ?? []).joined(separator: " "))" }
                    .joined(separator: ";"),
            ])
        }
        return csv
    }

    static func table(_ report: TypesReport, style: @escaping (String) -> String) -> String {
        let window = "\(CellFormat.time(report.window.from)) – \(CellFormat.time(report.window.to)) UTC"
        guard !report.rows.isEmpty else { return "No widget types (\(window))." }
        var table = TextTable(columns: [
            .text("TYPE", flexible: true, shrinkPriority: -1), .text("APP", flexible: true, shrinkPriority: 1),
            .text("KNOWN"),
            .text("RENDERED BY", flexible: true), .text("UNKNOWN IN", flexible: true), .text("FROM"),
        ])
        for row in report.rows {
            table.append([
                row.widgetType, row.appID, row.isKnown ? "yes" : "no", range(row.renderingVersions),
                range(row.unknownIn), sourceList(row).map(\.rawValue).joined(separator: "+"),
            ])
        }
        let app = table.removeColumnIfUniform("APP").map { " in " + Terminal.name($0) } ?? ""
        return table.renderedGrouped(by: "APP", style: style) + "\n\n\(report.rows.count) types\(app) (\(window))."
    }

    /// The sources that answered for some version of the row's app, best first.
    private static func sourceList(_ row: TypesReport.Row) -> [AppTraffic.Source] {
        row.sources.keys.sorted()
    }

    /// A version list shortened for a cell: `5.3.0` … `5.4.1` (4) when long.
    private static func range(_ versions: [String]) -> String {
        switch versions.count {
        case 0: return "-"
        case 1...3: return versions.joined(separator: ", ")
        default: return "\(versions.first!) … \(versions.last!) (\(versions.count))"
        }
    }
}
