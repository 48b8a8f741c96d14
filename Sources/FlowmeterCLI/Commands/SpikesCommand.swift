import Detector
import FlowmeterModels

/// `flowmeter spikes`: diagnostics series whose count jumped well above both their recent and their usual level
/// (docs/api.md#query-output, docs/detector.md).
enum SpikesCommand {
    static var command: Command {
        Command(
            name: "spikes",
            abstract: "Diagnostic counts that jumped above their recent and seasonal baseline.",
            discussion: """
                Five-minute buckets per (app, kind, type) and per app version, against the larger of the trailing
                median and the same hour in earlier weeks or days (docs/detector.md); a series silent while its app
                was live has a baseline of zeros. Spikes of one (app, kind, type) that overlap in time are one
                incident, printed once with its versions. JSON as in docs/api.md#query-output (spikes and incidents).
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
        configuration.minEvents = try SharedOptions.count(arguments, "min-events") ?? 20
        configuration.minRatio =
            try arguments.parsed("min-ratio", as: "a number ≥ 1") {
                Double($0).flatMap { $0 >= 1 && $0.isFinite ? $0 : nil }
            } ?? 3
        configuration.deployWindow = try QueryOptions.deployWindow(arguments)
        let owners = try OwnerOptions.rules(arguments)
        let team = try OwnerOptions.team(arguments, rules: owners)
        let store = try QueryOptions.openStore(arguments)
        let detector = SpikeDetector(configuration: configuration)
        let (found, freshness) = try await QueryOptions.read {
            let freshness = try FreshnessNote.load(store, window: window)
            return (try detector.report(reader: store, from: window.from, to: window.to, appID: appID), freshness)
        }
        let report = found.filter {
            arguments.mayRead($0.appID)
                && OwnerOptions.keeps(team, rules: owners, appID: $0.appID, widgetType: $0.widgetType, pages: $0.pages)
        }
        format.print(
            to: arguments.output, json: { report.jsonValue }, csv: { csv(report) },
            table: { table(report, owners: owners, style: $0) }, freshness: freshness)
        return report.exitStatus
    }

    /// One block per incident (the heading names type, kind and how many versions it hit, then onset, suspect
    /// deploy and team), then one row per spike: all versions first, so the table fits 80 columns without cutting a
    /// type name. The last line counts incidents, and names the one when there is one.
    static func table(_ report: SpikesReport, owners: OwnerRules? = nil, style: @escaping (String) -> String)
        -> String
    {
        let window = "\(CellFormat.time(report.from)) – \(CellFormat.time(report.to)) UTC"
        guard !report.incidents.isEmpty else { return "No spikes (\(window))." }
        let apps = Set(report.incidents.map(\.appID))
        var blocks: [String] = []
        for incident in report.incidents {
            var heading = style(Terminal.name(typeName(incident)))
            heading +=
                "  \(Terminal.name(incident.kind.rawValue))  \(Terminal.name(FindingWording.reach(incident)))"
            if apps.count > 1 { heading += "  \(Terminal.name(incident.appID))" }
            var lines = [heading]
            var facts = ["onset \(CellFormat.time(incident.onset))"]
            if let deploy = incident.suspectDeploy {
                facts.append(
                    "suspect deploy \(Terminal.name("\(deploy.service)@\(deploy.version)"))"
                        + " (\(lag(deploy.lagSeconds)))")
            }
            if let team = owners?.team(appID: incident.appID, widgetType: incident.widgetType, pages: incident.pages) {
                facts.append("team \(Terminal.name(team))")
            }
            lines += Terminal.wrapped(facts.joined(separator: " · "), indent: "    ")
            var table = TextTable(columns: [
                .text("    VERSION", flexible: true), .text("ONSET"), .text("PEAK"), .number("COUNT"),
                .number("BASELINE"), .number("RATIO"),
            ])
            for spike in incident.spikes.sorted(by: { ($0.appVersion == nil ? 0 : 1) < ($1.appVersion == nil ? 0 : 1) })
            {
                table.append([
                    "    " + Terminal.name(spike.appVersion ?? "all"), CellFormat.time(spike.onset),
                    CellFormat.time(spike.peakWindowStart), String(spike.count), CellFormat.decimal(spike.baseline),
                    CellFormat.decimal(spike.ratio) + "×",
                ])
            }
            lines.append(table.rendered(style: { $0 }))
            blocks.append(lines.joined(separator: "\n"))
        }
        let app = apps.count == 1 ? " in \(Terminal.name(apps.first!))" : ""
        let summary: String
        if report.incidents.count == 1, let only = report.incidents.first {
            summary =
                "1 incident: \(Terminal.name(typeName(only))) \(Terminal.name(only.kind.rawValue)) "
                + "\(Terminal.name(FindingWording.reach(only)))\(app)"
        } else {
            summary = "\(report.incidents.count) incidents (\(report.spikes.count) spikes)\(app)"
        }
        let last = Terminal.wrapped("\(summary) (\(window)).", indent: "").joined(separator: "\n")
        return blocks.joined(separator: "\n\n") + "\n\n" + last
    }

    /// The deploy's lag from the onset in words. The onset is a bucket's start, so a deploy that finished inside
    /// the onset bucket has a small negative lag (docs/api.md#query-output); a larger one is events that came before
    /// the marker.
    static func lag(_ seconds: Int64, bucketSeconds: Int64 = 300) -> String {
        if seconds >= 0 { return "finished \(seconds) s before the onset" }
        if -seconds < bucketSeconds { return "finished inside the onset's \(bucketSeconds / 60)-minute bucket" }
        return "finished \(-seconds) s after the onset"
    }

    private static func typeName(_ incident: Incident) -> String {
        incident.widgetType.isEmpty ? "(no type)" : incident.widgetType
    }

    static func csv(_ report: SpikesReport) -> CSVTable {
        var csv = CSVTable(header: [
            "appID", "kind", "widgetType", "appVersion", "onset", "peakWindowStart", "count", "baseline", "ratio",
            "suspectDeploy", "backendReleases", "incident",
        ])
        var incidentOf: [Spike: Int] = [:]
        for (index, incident) in report.incidents.enumerated() {
            for spike in incident.spikes { incidentOf[spike] = index + 1 }
        }
        for spike in report.spikes {
            csv.rows.append([
                spike.appID, spike.kind.rawValue, spike.widgetType, spike.appVersion ?? "", spike.onset.rfc3339String,
                spike.peakWindowStart.rfc3339String, String(spike.count), String(spike.baseline), String(spike.ratio),
                spike.suspectDeploy.map { "\($0.service)@\($0.version)" } ?? "",
                spike.backendReleases.joined(separator: " "), incidentOf[spike].map(String.init) ?? "",
            ])
        }
        return csv
    }
}
