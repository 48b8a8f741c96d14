import Detector
import FlowmeterModels
import Foundation

/// `flowmeter check PAYLOAD.json`: before a deploy, the share of each app's recent installs that would see each
/// widget type of a page payload as unknown, or as missing a key their build requires (by capability manifests).
enum CheckCommand {
    static var command: Command {
        Command(
            name: "check",
            abstract:
                "Before a deploy: which share of installs would not render, or not decode, each widget of a page.",
            discussion: """
                Walks the Flow-UI page envelope (page, header, sections and their widgets, footer, and every object
                with a "type" nested inside them: accordion children, sheets, tabs, carousels; see docs/cli.md),
                then judges each widget type against every app version with release traffic in the window. A version
                with a capability manifest (flowmeter manifests upload) renders the types its manifest lists and
                needs the keys it requires: a widget whose data lacks one is malformed for it (the key and path are
                named); keys no manifest names are additive and fine; a section arrangement it does not know falls
                back to vertical. A version without a manifest renders a type when its capabilities register it,
                or, without capabilities, when it had traffic and reported no unknownType for it; a type no app
                knows is unknown to every version, and is checked for a likely typo of a known type. Shares weigh
                versions by installs. Give any number of payload files and directories (every *.json under them);
                - reads NDJSON from standard input, one payload per line. When a collector is behind for the
                window, a warning says the shares may miss its events. With no traffic in the window, the
                manifests judge exactly (every version's manifest must list each type and get its required keys);
                without manifests either, every type is reported as not judged. --format sarif, junit and github
                are for CI (docs/cli.md); --approvals accepts known findings until their expiry date.

                Exit status: 0 every type under --max-unknown-share (or approved), 3 some type unknown to or
                malformed for more of an app's installs, 1 error, 2 usage error.
                """,
            positionalUsage: "PAYLOAD.json|DIR|- …",
            options: QueryOptions.common().filter { $0.name != "format" } + [
                .value(
                    "format", "FORMAT",
                    help: "table | json | csv | sarif (code scanning) | junit | github (workflow annotations).",
                    default: "table"),
                .value(
                    "approvals", "FILE",
                    help: "Accepted findings, each with reason, owner and expiry date (docs/cli.md)."),
                .value(
                    "max-unknown-share", "SHARE",
                    help: "The largest share of an app's installs that may not render a type (0.5% or 0.005).",
                    default: "0.5%"),
            ],
            run: { arguments in try await run(arguments) }
        )
    }

    private static func run(_ arguments: ParsedArguments) async throws -> Int32 {
        let path = arguments.commandPath
        guard !arguments.positionals.isEmpty else {
            throw CommandUsageError(
                "missing PAYLOAD.json (page payload files, directories of them, or - for NDJSON on standard input)",
                commandPath: path)
        }
        let formatName = arguments.value("format") ?? "table"
        let ciFormat = CheckCIFormat(rawValue: formatName)
        let format: OutputFormat =
            ciFormat == nil
            ? try arguments.parsed("format", as: "table, json, csv, sarif, junit or github") {
                OutputFormat(rawValue: $0)
            } ?? .table : .json
        let window = try QueryOptions.window(arguments)
        let appID = QueryOptions.appID(arguments)
        let threshold =
            try arguments.parsed("max-unknown-share", as: "a share such as 0.5% or 0.005", OptionValues.share)
            ?? 0.005
        let approvals = try arguments.value("approvals").map { try CheckApprovals(path: $0) } ?? CheckApprovals()
        let payloads = try CheckPayload.gather(arguments.positionals) {
            FileHandle.standardInput.readDataToEndOfFile()
        }
        guard !payloads.isEmpty else {
            throw CommandError(.unreadableInput, "no payloads found in \(arguments.positionals.joined(separator: " "))")
        }
        let pages = try payloads.map { try readPage($0) }
        let store = try QueryOptions.openStore(arguments)
        let (apps, freshness, manifests) = try await QueryOptions.read {
            let freshness = try FreshnessNote.load(store, window: window, warns: true)
            return (
                try AppTraffic.load(reader: store, window: window, appID: appID), freshness,
                try ManifestIndex.load(reader: store, appID: appID)
            )
        }
        let owners = try OwnerOptions.rules(arguments)
        let team = try OwnerOptions.team(arguments, rules: owners)
        // Apps with manifests and no traffic in the window: judged exactly by their manifests when nothing has traffic.
        let withoutTraffic = manifests.versions.filter { apps[$0.key]?.versions.isEmpty ?? true }
        var reports: [CheckReport] = []
        var findings: [CheckFinding] = []
        for (payload, page) in zip(payloads, pages) {
            var report = CheckReport.make(
                page: page, apps: apps, window: window, payload: payload.name, maxUnknownShare: threshold)
            if let team { restrict(&report, to: team, rules: owners, appID: appID) }
            reports.append(report)
            findings += CheckFinding.findings(
                of: report, payload: payload, page: page,
                lines: CheckLineIndex(payload.bytes, firstLine: payload.firstLine),
                manifestsWithoutTraffic: withoutTraffic)
        }
        findings = approvals.apply(to: findings, now: Timestamp(Date()))
        let output = arguments.output
        if !reports.contains(where: \.hasLiveVersions) {
            output.printError(
                withoutTraffic.isEmpty
                    ? "warning: no app version had release traffic in the window and no manifest describes one; "
                        + "the payloads were not judged (what apps render is unknown)"
                    : "warning: no app version had release traffic in the window; judged by the manifests alone")
        }
        let failed = findings.contains(where: \.fails)
        if let ciFormat {
            if let warning = freshness.warning { output.printError(warning) }
            output.print(ciFormat.render(findings, payloads: payloads))
        } else if reports.count == 1 {
            let final = reports[0]
            let approvalLines = approvalNotes(findings)
            format.print(
                to: output, json: { final.jsonValue }, csv: { csv(final) },
                table: { style in
                    let verdictText =
                        failed || final.exitStatus == 0
                        ? verdict(final, styled: output.styled)
                        : "\n" + output.styled("OK", .green) + ": every finding over the threshold is approved (above)."
                    return table(final, style: style) + approvalLines + "\n" + verdictText
                }, freshness: freshness)
        } else {
            let all = reports
            format.print(
                to: output,
                json: {
                    .object([
                        ("from", .string(window.from.rfc3339String)), ("to", .string(window.to.rfc3339String)),
                        ("passed", .bool(!failed)), ("payloads", .array(all.map(\.jsonValue))),
                    ])
                },
                csv: {
                    var merged = CSVTable(header: ["payload"] + csv(all[0]).header)
                    for report in all { merged.rows += csv(report).rows.map { [report.payload] + $0 } }
                    return merged
                },
                table: { style in
                    all.map { table($0, style: style) + "\n" + verdict($0, styled: output.styled) }
                        .joined(separator: "\n\n") + approvalNotes(findings)
                }, freshness: freshness)
        }
        return failed ? 3 : 0
    }

    /// Only the team's types, judged only in the apps where the team owns them.
    private static func restrict(_ report: inout CheckReport, to team: String, rules: OwnerRules?, appID: String?) {
        for index in report.types.indices {
            let type = report.types[index].widgetType
            report.types[index].apps.removeAll {
                !OwnerOptions.keeps(team, rules: rules, appID: $0.appID, widgetType: type)
            }
            report.types[index].problems.removeAll {
                !OwnerOptions.keeps(team, rules: rules, appID: $0.appID, widgetType: type)
            }
        }
        report.types.removeAll {
            $0.apps.isEmpty && !OwnerOptions.keeps(team, rules: rules, appID: appID ?? "", widgetType: $0.widgetType)
        }
    }

    /// Lines under the table for findings an approval covers: accepted until its date, or expired and failing again.
    private static func approvalNotes(_ findings: [CheckFinding]) -> String {
        let covered = findings.filter { $0.approval != nil }
        guard !covered.isEmpty else { return "" }
        return "\n\n"
            + covered.map { "  " + ($0.approvalExpired ? "EXPIRED APPROVAL: " : "approved: ") + $0.message }
            .joined(separator: "\n")
    }

    private static func readPage(_ payload: CheckPayload) throws -> PageWalker.Page {
        do {
            return try PageWalker.page(in: Data(payload.bytes))
        } catch .notJSON(let reason) {
            throw CommandError(.unreadableInput, "payload '\(payload.name)' is not JSON: \(reason)")
        } catch .notAnObject {
            throw CommandError(.unreadableInput, "payload '\(payload.name)' is not a JSON object (a page envelope)")
        } catch .tooDeep {
            throw CommandError(
                .unreadableInput, "payload '\(payload.name)' nests deeper than \(PageWalker.maxDepth) levels")
        }
    }

    static func table(_ report: CheckReport, style: @escaping (String) -> String) -> String {
        let window = "\(CellFormat.time(report.window.from)) – \(CellFormat.time(report.window.to)) UTC"
        let name = Terminal.name(URL(fileURLWithPath: report.payload).lastPathComponent)
        var lines = [
            "\(name): \(report.widgetCount) widgets of \(report.types.count) types.",
            "Release versions live \(window).", "",
        ]
        var table = TextTable(columns: [
            .text("TYPE", flexible: true, shrinkPriority: -1), .text("APP", flexible: true, shrinkPriority: 1),
            .number("UNKNOWN"),
            .text("NOT RENDERED BY", flexible: true), .text("NOTE", flexible: true),
        ])
        for type in report.types {
            let note: (String, Double) -> String = { app, share in
                if let typo = type.likelyTypoOf { return "typo of \(typo)?" }
                if !type.isKnown { return "no app knows it" }
                if share > report.maxUnknownShare { return "over \(CellFormat.percent(report.maxUnknownShare))" }
                let lacking = type.malformed.filter { $0.appID == app }
                if let first = lacking.first {
                    let more = lacking.count > 1 ? " +\(lacking.count - 1)" : ""
                    return "lacks \(first.key ?? "")\(more) (\(CellFormat.percent(first.installShare)))"
                }
                return type.additiveKeys.isEmpty ? "ok" : "ok, adds \(type.additiveKeys.joined(separator: ", "))"
            }
            if type.apps.isEmpty {
                table.append([type.widgetType, "-", "-", "-", note("", 0)])
            }
            for app in type.apps {
                let missing = app.unknownVersions
                let versions: String
                if missing.isEmpty {
                    versions = "-"
                } else if missing.count == app.versions.count {
                    versions = "all \(missing.count) versions"
                } else {
                    versions = missing.map { "\($0.appVersion) (\(CellFormat.percent($0.installShare)))" }
                        .joined(separator: ", ")
                }
                table.append([
                    type.widgetType, app.appID, CellFormat.percent(app.unknownShare), versions,
                    note(app.appID, app.unknownShare),
                ])
            }
        }
        if let app = table.removeColumnIfUniform("APP") {
            lines[1] = Terminal.name(app) + " release versions live \(window)."
        }
        lines.append(table.rendered(style: style))
        lines += shapeLines(report)
        return lines.joined(separator: "\n")
    }

    /// What the manifests add below the table: missing keys, additive keys, arrangements that fall back, and the
    /// versions judged without a manifest.
    static func shapeLines(_ report: CheckReport) -> [String] {
        var lines: [String] = []
        for type in report.types {
            for problem in type.malformed {
                lines += Terminal.wrapped(
                    "\(Terminal.name(type.widgetType)) lacks \(Terminal.name(problem.key ?? "")) at "
                        + "\(Terminal.name(problem.path))"
                        + (problem.occurrences > 1 ? " (and \(problem.occurrences - 1) more)" : "")
                        + ": \(Terminal.name(problem.appID)) \(problem.versions.map(Terminal.name).joined(separator: ", ")) "
                        + "\(problem.versions.count == 1 ? "requires" : "require") it "
                        + "(\(CellFormat.percent(problem.installShare)) of installs).", indent: "  ")
            }
            if !type.additiveKeys.isEmpty {
                lines += Terminal.wrapped(
                    "\(Terminal.name(type.widgetType)) adds \(type.additiveKeys.map(Terminal.name).joined(separator: ", ")): "
                        + "no manifest names \(type.additiveKeys.count == 1 ? "it" : "them"); additive, fine.",
                    indent: "  ")
            }
        }
        for arrangement in report.arrangements {
            for app in arrangement.apps {
                lines += Terminal.wrapped(
                    "Arrangement \(Terminal.name(arrangement.arrangement)) (\(Terminal.name(arrangement.paths[0]))) falls "
                        + "back to vertical on \(Terminal.name(app.appID)) "
                        + "\(app.versions.map(Terminal.name).joined(separator: ", ")) "
                        + "(\(CellFormat.percent(app.installShare)) of installs).", indent: "  ")
            }
        }
        for app in report.withoutManifest.keys.sorted() {
            lines += Terminal.wrapped(
                "No manifest: \(Terminal.name(app)) \(report.withoutManifest[app]!.map(Terminal.name).joined(separator: ", ")) "
                    + "judged by capabilities or traffic, shapes unchecked.", indent: "  ")
        }
        return lines.isEmpty ? [] : [""] + lines
    }

    /// The last line: which types fail, or that the payload passes.
    static func verdict(_ report: CheckReport, styled: (String, Terminal.Style) -> String) -> String {
        let limit = CellFormat.percent(report.maxUnknownShare)
        let unknown = report.types.filter { $0.maxUnknownShare > report.maxUnknownShare }
        let malformed = report.types.filter { type in
            type.malformed.contains { $0.installShare > report.maxUnknownShare }
        }
        guard !unknown.isEmpty || !malformed.isEmpty else {
            let shapes = report.types.contains { type in
                type.apps.contains { app in app.versions.contains { $0.source == .manifest } }
            }
            if shapes {
                return "\n" + styled("OK", .green)
                    + ": no type is unknown or malformed for more than \(limit) of an app's installs."
            }
            return "\n" + styled("OK", .green) + ": no type is unknown to more than \(limit) of any app's installs."
        }
        var lines: [String] = []
        if !unknown.isEmpty {
            let noun = unknown.count == 1 ? "type is" : "types are"
            lines.append(
                styled("FAIL", .red) + ": \(unknown.count) \(noun) unknown to more than \(limit) of an app's installs:")
            lines += nameLines(unknown.map { Terminal.name($0.widgetType) })
        }
        if !malformed.isEmpty {
            let noun = malformed.count == 1 ? "type lacks a key" : "types lack keys"
            lines.append(
                styled("FAIL", .red)
                    + ": \(malformed.count) \(noun) that more than \(limit) of an app's installs require:")
            lines += nameLines(
                malformed.map { type in
                    let keys = Set(type.malformed.filter { $0.installShare > report.maxUnknownShare }.compactMap(\.key))
                    return Terminal.name(type.widgetType) + " ("
                        + keys.sorted().map(Terminal.name).joined(separator: ", ") + ")"
                })
        }
        return "\n" + lines.joined(separator: "\n")
    }

    /// Names two spaces in, wrapped at 78 columns.
    private static func nameLines(_ names: [String]) -> [String] {
        var lines: [String] = []
        var line = " "
        for name in names {
            if Terminal.columns(line) + Terminal.columns(name) + 2 > 78 && line.count > 1 {
                lines.append(line)
                line = " "
            }
            line += " " + name
        }
        lines.append(line)
        return lines
    }

    static func csv(_ report: CheckReport) -> CSVTable {
        var csv = CSVTable(header: [
            "widgetType", "occurrences", "known", "likelyTypoOf", "appID", "appVersion", "versionInstalls",
            "installShare", "renders", "appUnknownShare", "overThreshold", "source", "missingKeys",
        ])
        for type in report.types {
            let common = [type.widgetType, String(type.occurrences), String(type.isKnown), type.likelyTypoOf ?? ""]
            if type.apps.isEmpty {
                csv.rows.append(common + ["", "", "", "", "", "", "false", "", ""])
            }
            for app in type.apps {
                for version in app.versions {
                    csv.rows.append(
                        common + [
                            app.appID, version.appVersion, String(version.installs), String(version.installShare),
                            String(version.renders), String(app.unknownShare),
                            String(app.unknownShare > report.maxUnknownShare), version.source.rawValue,
                            version.missingKeys.joined(separator: " "),
                        ])
                }
            }
        }
        return csv
    }
}
