/// `flowmeter versions`: per app version, installs, batches and the decode-clean rate.
enum VersionsCommand {
    static var command: Command {
        Command(
            name: "versions",
            abstract: "Per app version: installs, batches and the share of batches that decoded cleanly.",
            discussion: """
                Release builds with traffic in the window, platforms merged, oldest version first. CLEAN is clean
                batches ÷ batches: the share of batches that carried no diagnostic at all. CAPS says whether the
                version sends capabilities (how many types it registers). Exit status: 0, 1 error, 2 usage error.
                """,
            options: QueryOptions.common(),
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
        var report = VersionsReport.make(window: window, apps: apps)
        // A version row is the app's, not a type's: it belongs to the team owning the app's untyped findings (an
        // appID rule, or the default team).
        report.rows.removeAll {
            !arguments.mayRead($0.appID) || !OwnerOptions.keeps(team, rules: owners, appID: $0.appID, widgetType: "")
        }
        format.print(
            to: arguments.output, json: { report.jsonValue }, csv: { csv(report) },
            table: { table(report, style: $0) }, freshness: freshness)
        return 0
    }

    static func csv(_ report: VersionsReport) -> CSVTable {
        var csv = CSVTable(header: [
            "appID", "appVersion", "platforms", "installs", "batches", "cleanBatches", "decodeCleanRate",
            "decodes", "sendsCapabilities", "registeredTypes",
        ])
        for row in report.rows {
            csv.rows.append([
                row.appID, row.appVersion, row.platforms.joined(separator: " "), String(row.installs),
                String(row.batches), String(row.cleanBatches), row.decodeCleanRate.map { String($0) } ?? "",
                String(row.decodes), String(row.sendsCapabilities), String(row.registeredTypes),
            ])
        }
        return csv
    }

    static func table(_ report: VersionsReport, style: @escaping (String) -> String) -> String {
        let window = "\(CellFormat.time(report.window.from)) – \(CellFormat.time(report.window.to)) UTC"
        guard !report.rows.isEmpty else { return "No release traffic (\(window))." }
        var table = TextTable(columns: [
            .text("APP", flexible: true, shrinkPriority: 1), .text("VERSION", flexible: true),
            .text("PLATFORMS", flexible: true),
            .number("INSTALLS"), .number("BATCHES"), .number("CLEAN"), .number("CAPS"),
        ])
        for row in report.rows {
            table.append([
                row.appID, row.appVersion, row.platforms.joined(separator: ","), String(row.installs),
                String(row.batches), row.decodeCleanRate.map(CellFormat.percent) ?? "-",
                row.sendsCapabilities ? String(row.registeredTypes) : "no",
            ])
        }
        let app = table.removeColumnIfUniform("APP").map { " of " + Terminal.name($0) } ?? ""
        return table.rendered(style: style) + "\n\n\(report.rows.count) versions\(app) (\(window))."
    }
}
