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
                versions by installs. PAYLOAD may be - for standard input. When a collector is behind for the
                window, a warning says the shares may miss its events.

                Exit status: 0 every type under --max-unknown-share, 3 some type unknown to or malformed for more
                of an app's installs, 1 error, 2 usage error.
                """,
            positionalUsage: "PAYLOAD.json",
            options: QueryOptions.common() + [
                .value(
                    "max-unknown-share", "SHARE",
                    help: "The largest share of an app's installs that may not render a type (0.5% or 0.005).",
                    default: "0.5%")
            ],
            run: { arguments in try await run(arguments) }
        )
    }

    private static func run(_ arguments: ParsedArguments) async throws -> Int32 {
        let path = arguments.commandPath
        guard let payload = arguments.positionals.first else {
            throw CommandUsageError(
                "missing PAYLOAD.json (a page payload file, or - for standard input)", commandPath: path)
        }
        guard arguments.positionals.count == 1 else {
            throw CommandUsageError("expected one payload, got \(arguments.positionals.count)", commandPath: path)
        }
        let format = try OutputFormat.parse(arguments)
        let window = try QueryOptions.window(arguments)
        let appID = QueryOptions.appID(arguments)
        let threshold =
            try arguments.parsed("max-unknown-share", as: "a share such as 0.5% or 0.005", OptionValues.share)
            ?? 0.005
        let page = try readPage(payload)
        let store = try QueryOptions.openStore(arguments)
        let (apps, freshness) = try await QueryOptions.read {
            let freshness = try FreshnessNote.load(store, window: window, warns: true)
            return (try AppTraffic.load(reader: store, window: window, appID: appID), freshness)
        }
        var report = CheckReport.make(
            page: page, apps: apps, window: window, payload: payload, maxUnknownShare: threshold)
        let owners = try OwnerOptions.rules(arguments)
        if let team = try OwnerOptions.team(arguments, rules: owners) {
            // Only the team's types, judged only in the apps where the team owns them.
            for index in report.types.indices {
                let type = report.types[index].widgetType
                report.types[index].apps.removeAll {
                    !OwnerOptions.keeps(team, rules: owners, appID: $0.appID, widgetType: type)
                }
                report.types[index].problems.removeAll {
                    !OwnerOptions.keeps(team, rules: owners, appID: $0.appID, widgetType: type)
                }
            }
            report.types.removeAll {
                $0.apps.isEmpty
                    && !OwnerOptions.keeps(team, rules: owners, appID: appID ?? "", widgetType: $0.widgetType)
            }
        }
        let output = arguments.output
        if !report.hasLiveVersions {
            output.printError(
                "warning: no app version had release traffic in the window; nothing to check the payload against")
        }
        let final = report
        format.print(
            to: output, json: { final.jsonValue }, csv: { csv(final) },
            table: { style in table(final, style: style) + "\n" + verdict(final, styled: output.styled) },
            freshness: freshness)
        return report.exitStatus
    }

    private static func readPage(_ payload: String) throws -> PageWalker.Page {
        let data: Data
        if payload == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            guard let contents = FileManager.default.contents(atPath: payload) else {
                throw CommandError(.unreadableInput, "cannot read payload '\(payload)'")
            }
            data = contents
        }
        do {
            return try PageWalker.page(in: data)
        } catch .notJSON(let reason) {
            throw CommandError(.unreadableInput, "payload '\(payload)' is not JSON: \(reason)")
        } catch .notAnObject {
            throw CommandError(.unreadableInput, "payload '\(payload)' is not a JSON object (a page envelope)")
        } catch .tooDeep {
            throw CommandError(
                .unreadableInput, "payload '\(payload)' nests deeper than \(PageWalker.maxDepth) levels")
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
