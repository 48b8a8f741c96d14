import Detector
import FlowmeterModels

/// `flowmeter gates`: the minimum-version gates the backend needs today, the share of installs still below each,
/// and when that share is forecast to fall under `--threshold` so the gate can be dropped (docs/detector.md).
enum GatesCommand {
    static var command: Command {
        Command(
            name: "gates",
            abstract: "Version gates the backend needs, and when each can be dropped.",
            discussion: """
                For each app, the types only some live versions (those with traffic in the window's last day)
                render, from the capabilities apps send: the minimum version to gate at, the share of installs
                below it today, its trend per week, and the date that share is forecast to fall under --threshold
                (a logistic fit to the daily shares; with fewer than 7 days of traffic it says the data is too
                thin). Exit status: 0, 1 error, 2 usage error.
                """,
            options: QueryOptions.common(since: "28d") + [
                .value("threshold", "SHARE", help: "Below share at which a gate can go (1% or 0.01).", default: "1%")
            ],
            run: { arguments in try await run(arguments) }
        )
    }

    private static func run(_ arguments: ParsedArguments) async throws -> Int32 {
        let format = try OutputFormat.parse(arguments)
        let window = try QueryOptions.window(arguments)
        let appID = QueryOptions.appID(arguments)
        var configuration = GateFinder.Configuration()
        configuration.threshold =
            try arguments.parsed("threshold", as: "a share such as 1% or 0.01") {
                OptionValues.share($0).flatMap { $0 > 0 && $0 < 1 ? $0 : nil }
            } ?? 0.01
        let owners = try OwnerOptions.rules(arguments)
        let team = try OwnerOptions.team(arguments, rules: owners)
        let store = try QueryOptions.openStore(arguments)
        let finder = GateFinder(configuration: configuration)
        var (report, freshness) = try await QueryOptions.read {
            let freshness = try FreshnessNote.load(store, window: window)
            return (try finder.report(reader: store, from: window.from, to: window.to, appID: appID), freshness)
        }
        report.gates.removeAll {
            !arguments.mayRead($0.appID)
                || !OwnerOptions.keeps(team, rules: owners, appID: $0.appID, widgetType: $0.widgetType)
        }
        format.print(
            to: arguments.output, json: { [report] in report.jsonValue },
            csv: { [report] in csv(report) }, table: { [report] style in table(report, style: style) },
            freshness: freshness)
        return 0
    }

    /// The weekly trend as `62% → 55% → 48%` (the last four weeks at most).
    static func trend(_ gate: DroppableGate) -> String {
        let points = gate.trend.suffix(4).map { CellFormat.wholePercent($0.belowShare) }
        return points.isEmpty ? "-" : points.joined(separator: " → ")
    }

    static func table(_ report: GatesReport, style: @escaping (String) -> String) -> String {
        let window = "\(CellFormat.time(report.from)) – \(CellFormat.time(report.to)) UTC"
        guard !report.gates.isEmpty else {
            return "No gates needed: every live version renders every type it registers (\(window))."
        }
        var table = TextTable(columns: [
            .text("TYPE", flexible: true, shrinkPriority: -1), .text("APP", flexible: true, shrinkPriority: 1),
            .text("GATE"), .number("BELOW"), .text("TREND", flexible: true), .text("CAN DROP"),
        ])
        for gate in report.gates {
            table.append([
                Terminal.name(gate.widgetType), Terminal.name(gate.appID),
                "≥ " + Terminal.name(gate.minAppVersion), CellFormat.wholePercent(gate.belowShare),
                trend(gate), FindingWording.canDrop(gate.forecast),
            ])
        }
        let app = table.removeColumnIfUniform("APP").map { " in \($0)" } ?? ""
        let threshold = report.gates.first.map { CellFormat.percent($0.forecast.threshold) } ?? ""
        let noun = report.gates.count == 1 ? "gate" : "gates"
        var lines = [table.renderedGrouped(by: "APP", style: style), ""]
        lines += Terminal.wrapped(
            "\(report.gates.count) \(noun)\(app) (\(window)). BELOW: installs under the gate today; CAN DROP: when "
                + "that share falls under \(threshold).", indent: "")
        if report.gates.contains(where: { $0.forecast.basis == .tooThin }) {
            lines += Terminal.wrapped(
                "Too thin: a forecast needs traffic on at least 7 days of the window, and the store has less.",
                indent: "")
        }
        return lines.joined(separator: "\n")
    }

    static func csv(_ report: GatesReport) -> CSVTable {
        var csv = CSVTable(header: [
            "appID", "widgetType", "minAppVersion", "belowShare", "trend", "threshold", "forecastDate",
            "forecastBasis",
        ])
        for gate in report.gates {
            csv.rows.append([
                gate.appID, gate.widgetType, gate.minAppVersion, String(gate.belowShare),
                gate.trend.map { String($0.belowShare) }.joined(separator: " "), String(gate.forecast.threshold),
                gate.forecast.date?.rfc3339String ?? "", gate.forecast.basis.rawValue,
            ])
        }
        return csv
    }
}
