import Detector
import FlowmeterModels

/// `flowmeter ungated`: widget types that release builds report as `unknownType` often enough to matter, with the
/// gate that would stop them (docs/api.md#query-output).
enum UngatedCommand {
    static var command: Command {
        Command(
            name: "ungated",
            abstract: "Types the backend sends to app versions that cannot render them, with the gate to add.",
            discussion: """
                A type is ungated when release builds of some app version report it as unknownType from at least
                --min-installs installs and --min-events events in the window. Its status is new (never reported
                before the window), ongoing, or regressed (back after --regression-quiet without any report, so
                the backend had gated or fixed it). JSON as in docs/api.md#query-output, with how fresh the store is
                under "freshness"; when a collector is behind for the window, a warning on standard error says the
                answer (a gate above all) may be missing its events.
                Exit status: 0 nothing flagged, 3 something flagged, 1 error, 2 usage error.
                """,
            options: QueryOptions.common() + [
                .value(
                    "min-installs", "N", help: "Distinct installs some version must report it from.",
                    default: String(OptionDefaults.ungated.minInstalls)),
                .value(
                    "min-events", "N", help: "Events some version must report.",
                    default: String(OptionDefaults.ungated.minEvents)),
                .value(
                    "deploy-window", "DURATION", help: "How long before first sight a deploy is suspected.",
                    default: "60m"),
                .value(
                    "regression-quiet", "DURATION", help: "Quiet before a type's return is a regression.",
                    default: OptionDefaults.duration(OptionDefaults.ungated.regressionQuiet)),
            ],
            run: { arguments in try await run(arguments) }
        )
    }

    private static func run(_ arguments: ParsedArguments) async throws -> Int32 {
        let format = try OutputFormat.parse(arguments)
        let window = try QueryOptions.window(arguments)
        let appID = QueryOptions.appID(arguments)
        var configuration = UngatedTypeFinder.Configuration()
        configuration.minInstalls = try SharedOptions.count(arguments, "min-installs") ?? configuration.minInstalls
        configuration.minEvents = try SharedOptions.count(arguments, "min-events") ?? configuration.minEvents
        configuration.deployWindow = try QueryOptions.deployWindow(arguments)
        configuration.regressionQuiet = try SharedOptions.regressionQuiet(arguments)
        let owners = try OwnerOptions.rules(arguments)
        let team = try OwnerOptions.team(arguments, rules: owners)
        let store = try QueryOptions.openStore(arguments)
        let finder = UngatedTypeFinder(configuration: configuration)
        var (report, freshness) = try await QueryOptions.read {
            let freshness = try FreshnessNote.load(store, window: window, warns: true)
            return (try finder.report(reader: store, from: window.from, to: window.to, appID: appID), freshness)
        }
        report.ungated.removeAll {
            !arguments.mayRead($0.appID)
                || !OwnerOptions.keeps(team, rules: owners, appID: $0.appID, widgetType: $0.widgetType, pages: $0.pages)
        }
        format.print(
            to: arguments.output, json: { report.jsonValue }, csv: { csv(report) },
            table: { [report] style in table(report, owners: owners, style: style) }, freshness: freshness)
        return report.exitStatus
    }

    /// One block per type, so that nothing the reader needs is cut at 80 columns: the type, its app and totals on
    /// the first line; the gate (or the typo), rendering versions and suspect deploy on the second; affected versions
    /// with their install shares after that, wrapped.
    static func table(_ report: UngatedReport, owners: OwnerRules? = nil, style: @escaping (String) -> String)
        -> String
    {
        let window = "\(CellFormat.time(report.from)) – \(CellFormat.time(report.to)) UTC"
        guard !report.ungated.isEmpty else { return "No ungated types (\(window))." }
        let apps = Set(report.ungated.map(\.appID))
        var lines: [String] = []
        for type in report.ungated {
            let name = Terminal.name(type.widgetType)
            var head = style(name) + "  " + type.status.rawValue
            if apps.count > 1 { head += "  " + Terminal.name(type.appID) }
            head += "  \(CellFormat.count(type.events)) events from \(CellFormat.count(type.installs)) installs"
            lines.append(head)
            var facts: [String] = []
            if type.status == .regressed, let last = type.lastSeenBefore {
                let quiet = (type.firstSeen.secondsSinceEpoch - last.secondsSinceEpoch) / 3600
                facts.append("back after \(quiet) h without it (last seen \(CellFormat.time(last)))")
            }
            if let gate = type.suggestedMinAppVersion {
                facts.append("gate at ≥ " + Terminal.name(gate))
            } else if let typo = type.likelyTypoOf {
                facts.append("likely a typo of \(Terminal.name(typo))")
            } else {
                facts.append("no version renders it")
            }
            if !type.renderingVersions.isEmpty {
                facts.append("rendered by " + type.renderingVersions.map(Terminal.name).joined(separator: ", "))
            }
            if let deploy = type.suspectDeploy {
                facts.append(
                    "suspect deploy \(Terminal.name("\(deploy.service)@\(deploy.version)"))"
                        + " (finished \(deploy.lagSeconds) s before)")
            }
            if let team = owners?.team(appID: type.appID, widgetType: type.widgetType, pages: type.pages) {
                facts.append("team \(Terminal.name(team))")
            }
            lines += Terminal.wrapped(facts.joined(separator: " · "), indent: "    ")
            let affected = type.affectedVersions.map {
                "\(Terminal.name($0.appVersion)) (\(CellFormat.wholePercent($0.installShare)))"
            }
            lines += Terminal.wrapped("affected: " + affected.joined(separator: ", "), indent: "    ")
        }
        let app = apps.count == 1 ? " in \(Terminal.name(apps.first!))" : ""
        let noun = report.ungated.count == 1 ? "type" : "types"
        return lines.joined(separator: "\n") + "\n\n\(report.ungated.count) ungated \(noun)\(app) (\(window))."
    }

    static func csv(_ report: UngatedReport) -> CSVTable {
        var csv = CSVTable(header: [
            "appID", "widgetType", "appVersion", "events", "installs", "installShare", "renderingVersions",
            "suggestedGate", "firstSeen", "suspectDeploy", "likelyTypoOf", "status",
        ])
        for type in report.ungated {
            for version in type.affectedVersions {
                csv.rows.append([
                    type.appID, type.widgetType, version.appVersion, String(version.events), String(version.installs),
                    String(version.installShare), type.renderingVersions.joined(separator: " "),
                    type.suggestedMinAppVersion ?? "", type.firstSeen.rfc3339String,
                    type.suspectDeploy.map { "\($0.service)@\($0.version)" } ?? "", type.likelyTypoOf ?? "",
                    type.status.rawValue,
                ])
            }
        }
        return csv
    }
}
