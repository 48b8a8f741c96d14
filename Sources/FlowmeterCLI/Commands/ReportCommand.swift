import Detector
import FlowmeterModels
import Foundation
import Lifecycle
import RollupStore
import Rollups

/// `flowmeter report`: the weekly schema-health report from the store, as HTML, Markdown or JSON.
enum ReportCommand {
    static var command: Command {
        Command(
            name: "report",
            abstract: "Write the weekly schema-health report (HTML, Markdown or JSON) from the store.",
            discussion: """
                The report covers one ISO week (Monday 00:00Z to the next Monday) of
                release builds and compares it with the week before: events by kind,
                installs affected, decode-clean rate, ungated types (new, ongoing,
                resolved, regressed, with suggested gates), malformed payloads by type and
                path with the missing keys, duplicate ids by page, version adoption and
                decode-clean rate, deploys with the incidents attributed to them, the
                gates you can drop soon, and the actions to take (by team with --owners).
                HTML is one self-contained file (inline CSS and SVG, no scripts); Markdown
                pastes into an issue or a chat; JSON is described in docs/report.md.
                Without --format, the format follows the --output extension (.html, .md,
                .json), else md.

                Examples:
                  flowmeter report --output week.html
                  flowmeter report --week 2026-W48 --format md --app com.example.shop

                Exit status: 0 written, 1 error, 2 usage error.
                """,
            options: [
                .value("week", "YYYY-Www", help: "The ISO week, e.g. 2026-W48 (default: the last complete week)."),
                .value("format", "FORMAT", help: "html | md | json (default: from --output, else md)."),
                .value("app", "APPID", help: "Only this app."),
                SharedOptions.store,
                .value("output", "FILE", help: "Write to FILE instead of standard output."),
                .value("approvals", "FILE", help: "flowmeter check's approvals: list those expiring within 14 days."),
            ] + SharedOptions.ungatedThresholds + [
                OwnerOptions.owners
            ],
            run: { arguments in try await run(arguments) }
        )
    }

    /// The output formats.
    enum Format: String, CaseIterable {
        case html, md, json
    }

    private static func run(_ arguments: ParsedArguments) async throws -> Int32 {
        let path = arguments.commandPath
        let now = Timestamp(Date())
        let week =
            try arguments.value("week").map { try ISOWeek(parsing: $0, commandPath: path) }
            ?? ISOWeek.lastComplete(before: now)
        let output = arguments.value("output").flatMap { $0.isEmpty || $0 == "-" ? nil : $0 }
        let format = try format(arguments, output: output)
        var finder = UngatedTypeFinder()
        finder.configuration.minInstalls =
            try arguments.parsed("min-installs", as: "a positive integer") { Int64($0).flatMap { $0 > 0 ? $0 : nil } }
            ?? OptionDefaults.ungated.minInstalls
        finder.configuration.minEvents =
            try arguments.parsed("min-events", as: "a positive integer") { Int64($0).flatMap { $0 > 0 ? $0 : nil } }
            ?? OptionDefaults.ungated.minEvents
        finder.configuration.regressionQuiet = try SharedOptions.regressionQuiet(arguments)
        let appID = arguments.value("app").flatMap { $0.isEmpty ? nil : $0 }
        let owners = try OwnerOptions.rules(arguments)
        let store = try SharedOptions.openStore(arguments)
        let builder = WeeklyReportBuilder(ungatedFinder: finder, owners: owners)
        let window = QueryWindow(from: week.start, to: min(week.end, now))
        var (report, freshness) = try await onThread(named: "flowmeter-blocking") {
            () -> Result<(WeeklyReport, FreshnessNote), any Error> in
            Result {
                let freshness = try FreshnessNote.load(store, window: window, now: now)
                return (try builder.report(reader: store, week: week, appID: appID, now: now), freshness)
            }
        }.get()
        report.freshness = freshness.text
        if let path = arguments.value("approvals"), !path.isEmpty {
            report.expiringApprovals = try CheckApprovals(path: path).expiring(within: 14, now: now).map {
                WeeklyReport.ExpiringApproval(
                    widgetType: $0.widgetType, kind: $0.kind, appID: $0.appID, key: $0.key, owner: $0.owner,
                    reason: $0.reason, expires: $0.expires, isExpired: $0.expiresAt <= now)
            }
        }
        if week.end > now {
            arguments.output.printError("note: \(week) is not over yet; the report covers it up to now")
        }
        let text =
            format == .json
            ? freshness.appended(to: report.jsonValue).serialized(prettyPrinted: true) + "\n"
            : render(report, as: format)
        guard let output else {
            arguments.output.write(text)
            return 0
        }
        let url = URL(fileURLWithPath: output)
        try Data(text.utf8).write(to: url, options: .atomic)
        let size = ReportFormatting.count(Int64((text.utf8.count + 1023) / 1024))
        FileHandle.standardError.write(
            Data("wrote the \(week) report (\(format.rawValue), \(size) KB) to \(url.path)\n".utf8))
        return 0
    }

    /// The report in `format`.
    static func render(_ report: WeeklyReport, as format: Format) -> String {
        switch format {
        case .html: return report.html
        case .md: return report.markdown
        case .json: return report.jsonString(prettyPrinted: true) + "\n"
        }
    }

    private static func format(_ arguments: ParsedArguments, output: String?) throws(CommandUsageError) -> Format {
        if let raw = arguments.value("format") {
            let aliases: [String: Format] = ["markdown": .md, "htm": .html]
            guard let format = Format(rawValue: raw.lowercased()) ?? aliases[raw.lowercased()] else {
                throw CommandUsageError(
                    "invalid value '\(raw)' for --format: expected html, md or json", commandPath: arguments.commandPath
                )
            }
            return format
        }
        switch output.map({ URL(fileURLWithPath: $0).pathExtension.lowercased() }) {
        case "html", "htm": return .html
        case "json": return .json
        default: return .md
        }
    }
}
