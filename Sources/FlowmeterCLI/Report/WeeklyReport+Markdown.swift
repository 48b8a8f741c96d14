import Detector
import FlowmeterModels

extension WeeklyReport {
    /// The report as GitHub-flavoured Markdown: headings, lists and pipe tables, no HTML, so it pastes cleanly into
    /// an issue, a pull request or a chat that renders Markdown.
    ///
    /// Data is quoted so it cannot change the layout: names and messages go in code spans (backticks and pipes
    /// escaped, newlines folded), other values have Markdown punctuation backslash-escaped.
    public var markdown: String {
        MarkdownWriter(report: self).render()
    }
}

/// Writes ``WeeklyReport/markdown``.
private struct MarkdownWriter {
    let report: WeeklyReport
    let showsApp: Bool
    let maxRows = 25

    init(report: WeeklyReport) {
        self.report = report
        self.showsApp = report.showsAppColumn
    }

    func render() -> String {
        var lines: [String] = []
        let from = report.current.from
        let lastDay = Timestamp(secondsSinceEpoch: report.current.to.secondsSinceEpoch - 86_400)
        lines.append("# Schema health \(report.week.description)")
        lines.append("")
        var scope = report.appID.map { "App " + Self.code($0) } ?? "All apps"
        scope += " · \(ReportFormatting.day(from)) to \(ReportFormatting.day(lastDay)) (UTC)"
        scope += " · release builds · compared with \(report.week.previous.description)"
        lines.append(scope)
        lines += section("Actions", actions())
        lines += section("Summary", summary())
        lines += section("Ungated types", ungated())
        lines += section("New types", newTypes())
        lines += section("Malformed payloads", malformed())
        lines += section("Duplicate ids", duplicates())
        lines += section("Versions", versions())
        lines += section("Gates you can drop soon", gates())
        if report.manifestsChecked > 0 { lines += section("Manifests out of date", manifestDrift()) }
        lines += section("Deploys", deploys())
        lines += section("Incidents", incidents())
        if !report.canary.isEmpty { lines += section("Backend releases compared", canary()) }
        if !report.expiringApprovals.isEmpty { lines += section("Check approvals expiring soon", approvals()) }
        lines.append("")
        lines.append("_Generated \(report.generatedAt.rfc3339String) by `flowmeter report`._")
        if let freshness = report.freshness {
            lines.append("")
            lines += freshness.split(separator: "\n").map { "_\($0)_" }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private func canary() -> [String] {
        var rows = [["Raises", "Kind", "Type", "Versions", "Events", "Diag/1K", "Beside", "Its diag/1K"]]
        for finding in report.canary.prefix(maxRows) {
            let rates = report.canaryRates[finding]
            rows.append([
                Self.code(finding.raising), finding.kind.rawValue, Self.code(finding.widgetType),
                finding.versions.joined(separator: ", "), ReportFormatting.count(finding.events),
                WeeklyReport.CanaryRates.text(rates?.raising), Self.code(finding.quiet),
                WeeklyReport.CanaryRates.text(rates?.quiet),
            ])
        }
        return [
            "Two releases of one service served the same versions at the same time; the first raised this, the "
                + "second did not (or far less): blame by comparison (`flowmeter matrix`). Diag/1K: each release's "
                + "diagnostics per 1,000 of its decodes on those versions."
        ] + [""] + table(rows, numeric: [4, 5, 7]) + more(report.canary.count)
    }

    private func approvals() -> [String] {
        var rows = [["Type", "Key", "Owner", "Expires", "Reason"]]
        for approval in report.expiringApprovals.prefix(maxRows) {
            rows.append([
                Self.code(approval.widgetType), approval.key.map(Self.code) ?? "", approval.owner,
                approval.expires + (approval.isExpired ? " (expired: failing again)" : ""), approval.reason,
            ])
        }
        return table(rows, numeric: []) + more(report.expiringApprovals.count)
    }

    private func section(_ title: String, _ body: [String]) -> [String] {
        ["", "## \(title)", ""] + body
    }

    private func actions() -> [String] {
        guard !report.actions.isEmpty else { return ["Nothing to do this week."] }
        var lines: [String] = []
        var number = 0
        for group in report.actionsByTeam where number < maxRows {
            if report.hasOwners {
                if !lines.isEmpty { lines.append("") }
                lines += ["### " + (group.team.map { "Team " + Self.escape($0) } ?? "No owner"), ""]
            }
            for action in group.actions.prefix(maxRows - number) {
                number += 1
                var line = "\(number). " + Self.sentence(action.segments)
                if showsApp { line += " in " + Self.code(action.appID) }
                lines.append(
                    line + " (\(ReportFormatting.count(action.events)) \(action.events == 1 ? "event" : "events"))")
            }
        }
        if report.actions.count > maxRows { lines += ["", "… and \(report.actions.count - maxRows) more."] }
        return lines
    }

    private func summary() -> [String] {
        let (now, then) = (report.current, report.previous)
        var rows: [[String]] = [["Metric", "This week", "Last week", "Change"]]
        rows.append([
            "Diagnostic events", ReportFormatting.count(now.totalEvents), ReportFormatting.count(then.totalEvents),
            ReportFormatting.change(now.totalEvents, from: then.totalEvents),
        ])
        for kind in now.kinds(alongside: then) {
            let (a, b) = (now.eventsByKind[kind] ?? 0, then.eventsByKind[kind] ?? 0)
            rows.append([
                "· " + Self.code(kind), ReportFormatting.count(a), ReportFormatting.count(b),
                ReportFormatting.change(a, from: b),
            ])
        }
        rows.append([
            "Installs affected", ReportFormatting.count(now.installsAffected),
            ReportFormatting.count(then.installsAffected),
            ReportFormatting.change(now.installsAffected, from: then.installsAffected),
        ])
        rows.append([
            "Installs", ReportFormatting.count(now.installs), ReportFormatting.count(then.installs),
            ReportFormatting.change(now.installs, from: then.installs),
        ])
        rows.append([
            "Decode-clean rate", ReportFormatting.percent(now.decodeCleanRate, places: 2),
            ReportFormatting.percent(then.decodeCleanRate, places: 2),
            ReportFormatting.pointChange(now.decodeCleanRate, from: then.decodeCleanRate),
        ])
        rows.append([
            "Ungated types", String(now.ungatedTypes), String(then.ungatedTypes),
            ReportFormatting.change(Int64(now.ungatedTypes), from: Int64(then.ungatedTypes)),
        ])
        return table(rows, numeric: [1, 2, 3])
    }

    private func ungated() -> [String] {
        guard !report.ungated.isEmpty else { return ["No ungated types this week or last."] }
        var header = ["Status", "Type", "Events", "Last week", "Affected versions", "Suggested gate", "Suspect deploy"]
        if showsApp { header.insert("App", at: 1) }
        var rows = [header]
        for change in report.ungated.prefix(maxRows) {
            let type = change.finding
            let affected = type.affectedVersions.map {
                Self.escape($0.appVersion) + " (" + ReportFormatting.percent($0.installShare) + ")"
            }.joined(separator: ", ")
            var gate = type.suggestedMinAppVersion.map { "≥ " + Self.escape($0) } ?? "–"
            if let typo = type.likelyTypoOf { gate = "typo of " + Self.code(typo) }
            var row = [
                change.status.rawValue, Self.code(type.widgetType), ReportFormatting.count(change.events),
                ReportFormatting.count(change.previousEvents), affected.isEmpty ? "–" : affected, gate,
                type.suspectDeploy.map { Self.code("\($0.service)@\($0.version)") } ?? "–",
            ]
            if showsApp { row.insert(Self.code(type.appID), at: 1) }
            rows.append(row)
        }
        return table(rows, numeric: showsApp ? [3, 4] : [2, 3]) + more(report.ungated.count)
    }

    private func newTypes() -> [String] {
        guard !report.newTypes.isEmpty else { return ["No type was seen for the first time."] }
        var rows = [["Type", "First seen as", "First seen"]]
        if showsApp { rows[0].insert("App", at: 0) }
        for type in report.newTypes.prefix(maxRows) {
            var row = [
                Self.code(type.widgetType), Self.code(type.kind.rawValue), ReportFormatting.minute(type.firstSeen),
            ]
            if showsApp { row.insert(Self.code(type.appID), at: 0) }
            rows.append(row)
        }
        return table(rows, numeric: []) + more(report.newTypes.count)
    }

    private func malformed() -> [String] {
        guard !report.malformed.isEmpty else { return ["No malformed payloads."] }
        var rows = [["Type", "Path", "Events", "Missing keys", "Message"]]
        if showsApp { rows[0].insert("App", at: 0) }
        var count = 0
        for group in report.malformed {
            for path in group.paths where count < maxRows {
                count += 1
                var row = [
                    Self.code(group.widgetType), path.codingPath.isEmpty ? "–" : Self.code(path.codingPath),
                    ReportFormatting.count(path.events),
                    path.missingKeys.isEmpty ? "–" : path.missingKeys.map(Self.code).joined(separator: ", "),
                    path.messages.first.map(Self.code) ?? "–",
                ]
                if showsApp { row.insert(Self.code(group.appID), at: 0) }
                rows.append(row)
            }
        }
        return table(rows, numeric: showsApp ? [3] : [2]) + more(report.malformed.map(\.paths.count).reduce(0, +))
    }

    private func duplicates() -> [String] {
        guard !report.duplicates.isEmpty else { return ["No duplicate ids."] }
        var rows = [["Page", "Events", "Types", "Example"]]
        if showsApp { rows[0].insert("App", at: 0) }
        for page in report.duplicates.prefix(maxRows) {
            var row = [
                page.pageID.map(Self.code) ?? "(unnamed)", ReportFormatting.count(page.events),
                page.widgetTypes.map(Self.code).joined(separator: ", "), page.messages.first.map(Self.code) ?? "–",
            ]
            if showsApp { row.insert(Self.code(page.appID), at: 0) }
            rows.append(row)
        }
        return table(rows, numeric: showsApp ? [2] : [1]) + more(report.duplicates.count)
    }

    private func versions() -> [String] {
        guard !report.versions.isEmpty else { return ["No release traffic this week."] }
        var rows = [["Version", "Installs", "Adoption", "vs last week", "Decode-clean", "Batches", "Lost on device"]]
        if showsApp { rows[0].insert("App", at: 0) }
        for version in report.versions.prefix(maxRows) {
            var row = [
                Self.escape(version.appVersion), ReportFormatting.count(version.installs),
                ReportFormatting.percent(version.adoption),
                ReportFormatting.change(version.installs, from: version.previousInstalls),
                ReportFormatting.percent(version.decodeCleanRate, places: 2), ReportFormatting.count(version.batches),
                version.onDeviceLossText,
            ]
            if showsApp { row.insert(Self.code(version.appID), at: 0) }
            rows.append(row)
        }
        return table(rows, numeric: showsApp ? [2, 3, 4, 5, 6, 7] : [1, 2, 3, 4, 5, 6]) + more(report.versions.count)
    }

    private func deploys() -> [String] {
        guard !report.deploys.isEmpty else { return ["No deploys recorded this week."] }
        var rows = [["Finished", "Deploy", "Incidents attributed", "Ungated types attributed"]]
        for impact in report.deploys.prefix(maxRows) {
            let spikes = impact.incidents.map { incident in
                Self.code(incident.widgetType) + " " + Self.escape(incident.kind.rawValue) + " "
                    + Self.escape(FindingWording.reach(incident)) + " ×"
                    + ReportFormatting.fixed(incident.ratio, places: 1)
            }
            rows.append([
                ReportFormatting.minute(impact.deploy.finishedAt),
                Self.code("\(impact.deploy.service)@\(impact.deploy.version)"),
                spikes.isEmpty ? "–" : spikes.joined(separator: ", "),
                impact.ungatedTypes.isEmpty
                    ? "–" : impact.ungatedTypes.map { Self.code($0.widgetType) }.joined(separator: ", "),
            ])
        }
        return table(rows, numeric: []) + more(report.deploys.count)
    }

    private func incidents() -> [String] {
        guard !report.incidents.isEmpty else { return ["No spikes."] }
        var rows = [["Onset", "Kind", "Type", "Versions (peak)", "Peak (5 min)", "Baseline", "Suspect deploy"]]
        if showsApp { rows[0].insert("App", at: 1) }
        for incident in report.incidents.prefix(maxRows) {
            let versions = incident.versions.map {
                Self.escape($0.appVersion) + " (" + ReportFormatting.count($0.count) + ")"
            }
            var row = [
                ReportFormatting.minute(incident.onset), Self.escape(incident.kind.rawValue),
                Self.code(incident.widgetType), versions.isEmpty ? "across versions" : versions.joined(separator: ", "),
                ReportFormatting.count(incident.count), ReportFormatting.fixed(incident.baseline, places: 1),
                incident.suspectDeploy.map { Self.code("\($0.service)@\($0.version)") } ?? "–",
            ]
            if showsApp { row.insert(Self.code(incident.appID), at: 1) }
            rows.append(row)
        }
        return table(rows, numeric: showsApp ? [5, 6] : [4, 5]) + more(report.incidents.count)
    }

    private func gates() -> [String] {
        guard !report.gates.isEmpty else { return ["No version gates needed: every live version renders every type."] }
        var rows = [["Type", "Gate", "Below today", "Weekly trend", "Can drop"]]
        if showsApp { rows[0].insert("App", at: 0) }
        for gate in report.gates.prefix(maxRows) {
            let trend = gate.trend.suffix(4).map { ReportFormatting.percent($0.belowShare) }
            var row = [
                Self.code(gate.widgetType), "≥ " + Self.escape(gate.minAppVersion),
                ReportFormatting.percent(gate.belowShare), trend.isEmpty ? "–" : trend.joined(separator: " → "),
                Self.escape(FindingWording.canDrop(gate.forecast)),
            ]
            if showsApp { row.insert(Self.code(gate.appID), at: 0) }
            rows.append(row)
        }
        let threshold = ReportFormatting.percent(report.gates[0].forecast.threshold)
        return [
            "Types only some live versions render; _Can drop_ is when the share below the gate is forecast to fall "
                + "under \(threshold) (a logistic fit to the last four weeks' daily shares; seven days needed).", "",
        ] + table(rows, numeric: showsApp ? [3] : [2]) + more(report.gates.count)
    }

    private func manifestDrift() -> [String] {
        guard !report.manifestDrift.isEmpty else {
            return ["Every one of the \(report.manifestsChecked) manifests agrees with its version's traffic."]
        }
        var rows = [["Version", "Platform", "Type", "Drift", "Events"]]
        if showsApp { rows[0].insert("App", at: 0) }
        for drift in report.manifestDrift.prefix(maxRows) {
            var row = [
                Self.escape(drift.appVersion), Self.escape(drift.platform), Self.code(drift.widgetType),
                Self.escape(FindingWording.drift(drift)), ReportFormatting.count(drift.events),
            ]
            if showsApp { row.insert(Self.code(drift.appID), at: 0) }
            rows.append(row)
        }
        return [
            "Versions whose traffic contradicts the manifest their build uploaded: upload it again, generated from the "
                + "types the build registers (`flowmeter manifests check`).", "",
        ] + table(rows, numeric: showsApp ? [5] : [4]) + more(report.manifestDrift.count)
    }

    private func more(_ total: Int) -> [String] {
        total > maxRows ? ["", "… and \(total - maxRows) more (see `--format json`)."] : []
    }

    /// A pipe table; cells are already quoted, and a `|` left in a cell is escaped as GFM requires.
    private func table(_ rows: [[String]], numeric: Set<Int>) -> [String] {
        guard let header = rows.first else { return [] }
        let cells = rows.map { $0.map { $0.replacingOccurrences(of: "|", with: "\\|") } }
        var lines = ["| " + cells[0].joined(separator: " | ") + " |"]
        lines.append(
            "|" + header.indices.map { numeric.contains($0) ? " ---: " : " --- " }.joined(separator: "|") + "|")
        for row in cells.dropFirst() { lines.append("| " + row.joined(separator: " | ") + " |") }
        return lines
    }

    /// An action's sentence: fixed text as is, data quoted.
    static func sentence(_ segments: [WeeklyReport.Action.Segment]) -> String {
        segments.map { segment in
            switch segment {
            case .text(let text): return text
            case .code(let code): return Self.code(code)
            case .value(let value): return Self.escape(value)
            }
        }.joined()
    }

    /// `text` as a code span: on one line, fenced by more backticks than it holds in a row.
    static func code(_ text: String) -> String {
        let flat = folded(text)
        var longest = 0
        var run = 0
        for character in flat {
            run = character == "`" ? run + 1 : 0
            longest = max(longest, run)
        }
        let fence = String(repeating: "`", count: longest + 1)
        let padding = flat.hasPrefix("`") || flat.hasSuffix("`") || flat.isEmpty ? " " : ""
        return fence + padding + flat + padding + fence
    }

    /// `text` on one line with the Markdown punctuation that acts mid-line backslash-escaped, so it reads literally.
    static func escape(_ text: String) -> String {
        var output = ""
        for character in folded(text) {
            // Only what acts mid-line: `.`, `-`, `#` or `+` matter at a line start, which a value never is here.
            if "\\`*_[]<>|~&".contains(character) { output.append("\\") }
            output.append(character)
        }
        return output
    }

    /// Tabs and line breaks (U+2028 and U+2029 too) as spaces, so one value is one line of a list or table; every
    /// other character ``DisplaySafety`` flags (controls, bidi overrides) as U+FFFD, as the HTML report shows them.
    private static func folded(_ text: String) -> String {
        guard DisplaySafety.needsEscaping(text) else { return text }
        return String(
            String.UnicodeScalarView(
                text.unicodeScalars.map { scalar in
                    switch scalar {
                    case "\t", "\n", "\r", "\u{2028}", "\u{2029}": return " "
                    default: return DisplaySafety.mustEscape(scalar) ? "\u{FFFD}" : scalar
                    }
                }))
    }
}
