import Detector
import FlowmeterModels

/// `flowmeter spikes`: diagnostics series whose count jumped well above both their recent and their usual level
/// (CONTRACT §5, docs/detector.md).
enum SpikesCommand {
    static var command: Command {
        Command(
            name: "spikes",
            abstract: "Diagnostic counts that jumped above their recent and seasonal baseline.",
            discussion: """
                Five-minute buckets per (app, kind, type) and per app version, against the larger of the trailing
                median and the same hour in earlier weeks or days (docs/detector.md). JSON is CONTRACT §5's.
                Exit status: 0 no spike, 3 some spike, 1 error, 2 usage error.
                """,
            options: QueryOptions.common() + [
                .value("min-events", "N", help: "Fewest events in a bucket that can be a spike.", default: "20"),
                .value("min-ratio", "X", help: "Fewest times the baseline a bucket must reach.", default: "3"),
                .value(
                    "deploy-window", "DURATION", help: "How long before the onset a deploy is suspected.",
                    default: "60m"),
            ],
            run: { arguments in try await run(arguments) }
        )
    }

    private static func run(_ arguments: ParsedArguments) async throws -> Int32 {
        let format = try OutputFormat.parse(arguments)
        let window = try QueryOptions.window(arguments)
        let appID = QueryOptions.appID(arguments)
        var configuration = SpikeDetector.Configuration()
        configuration.minEvents = try UngatedCommand.count(arguments, "min-events") ?? 20
        configuration.minRatio =
            try arguments.parsed("min-ratio", as: "a number ≥ 1") {
                Double($0).flatMap { $0 >= 1 && $0.isFinite ? $0 : nil }
            } ?? 3
        configuration.deployWindow = try QueryOptions.deployWindow(arguments)
        let store = try QueryOptions.openStore(arguments)
        let detector = SpikeDetector(configuration: configuration)
        let report = try await QueryOptions.read {
            try detector.report(reader: store, from: window.from, to: window.to, appID: appID)
        }
        format.print(
            to: arguments.output, json: { report.jsonString(prettyPrinted: true) }, csv: { csv(report) },
            table: { table(report, style: $0) })
        return report.exitStatus
    }

    /// Spikes grouped by app, kind and type (the heading names them in full, with the suspect deploy), then one
    /// row per version: all versions first, so the table fits 80 columns without cutting a type name.
    static func table(_ report: SpikesReport, style: @escaping (String) -> String) -> String {
        let window = "\(CellFormat.time(report.from)) – \(CellFormat.time(report.to)) UTC"
        guard !report.spikes.isEmpty else { return "No spikes (\(window))." }
        let apps = Set(report.spikes.map(\.appID))
        var groups: [(key: String, heading: String, spikes: [Spike])] = []
        for spike in report.spikes {
            let key = "\(spike.appID)\u{0}\(spike.kind.rawValue)\u{0}\(spike.widgetType)"
            if let index = groups.firstIndex(where: { $0.key == key }) {
                groups[index].spikes.append(spike)
                continue
            }
            var heading = style(Terminal.name(spike.widgetType.isEmpty ? "(no type)" : spike.widgetType))
            heading += "  " + Terminal.name(spike.kind.rawValue)
            if apps.count > 1 { heading += "  \(Terminal.name(spike.appID))" }
            groups.append((key, heading, [spike]))
        }
        var blocks: [String] = []
        for group in groups {
            var lines = [group.heading]
            let deploys = Set(group.spikes.compactMap { $0.suspectDeploy.map { "\($0.service)@\($0.version)" } })
            if deploys.count == 1, let deploy = deploys.first {
                lines.append("    suspect deploy \(Terminal.name(deploy))")
            }
            var table = TextTable(
                columns: [
                    .text("    VERSION", flexible: true), .text("ONSET"), .text("PEAK"), .number("COUNT"),
                    .number("BASELINE"), .number("RATIO"),
                ] + (deploys.count > 1 ? [.text("DEPLOY", flexible: true)] : []))
            let ordered = group.spikes.sorted { ($0.appVersion == nil ? 0 : 1) < ($1.appVersion == nil ? 0 : 1) }
            for spike in ordered {
                var row = [
                    "    " + (spike.appVersion ?? "all"), CellFormat.time(spike.onset),
                    CellFormat.time(spike.peakWindowStart), String(spike.count), CellFormat.decimal(spike.baseline),
                    CellFormat.decimal(spike.ratio) + "×",
                ]
                if deploys.count > 1 { row.append(spike.suspectDeploy.map { "\($0.service)@\($0.version)" } ?? "-") }
                table.append(row)
            }
            lines.append(table.rendered(style: { $0 }))
            blocks.append(lines.joined(separator: "\n"))
        }
        let noun = report.spikes.count == 1 ? "spike" : "spikes"
        let app = apps.count == 1 ? " in \(Terminal.name(apps.first!))" : ""
        return blocks.joined(separator: "\n\n") + "\n\n\(report.spikes.count) \(noun)\(app) (\(window))."
    }

    static func csv(_ report: SpikesReport) -> CSVTable {
        var csv = CSVTable(header: [
            "appID", "kind", "widgetType", "appVersion", "onset", "peakWindowStart", "count", "baseline", "ratio",
            "suspectDeploy", "backendReleases",
        ])
        for spike in report.spikes {
            csv.rows.append([
                spike.appID, spike.kind.rawValue, spike.widgetType, spike.appVersion ?? "", spike.onset.rfc3339String,
                spike.peakWindowStart.rfc3339String, String(spike.count), String(spike.baseline), String(spike.ratio),
                spike.suspectDeploy.map { "\($0.service)@\($0.version)" } ?? "",
                spike.backendReleases.joined(separator: " "),
            ])
        }
        return csv
    }
}
