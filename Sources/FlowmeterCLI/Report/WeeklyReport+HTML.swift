import Detector
import FlowmeterModels

extension WeeklyReport {
    /// The report as one self-contained HTML page: inline CSS and inline SVG charts, no scripts and no external
    /// resources, dark text on a light background, laid out for the screen and for print (A4, page breaks between
    /// sections that would split).
    ///
    /// Every string from the data is escaped; a widget type such as `<script>` shows as text.
    public var html: String {
        HTMLWriter(report: self).render()
    }
}

/// Writes ``WeeklyReport/html``.
private struct HTMLWriter {
    let report: WeeklyReport
    let showsApp: Bool
    let maxRows = 40

    init(report: WeeklyReport) {
        self.report = report
        self.showsApp = report.showsAppColumn
    }

    private func e(_ text: String) -> String { HTMLEscaping.escape(text) }
    private func code(_ text: String) -> String { "<code>" + e(text) + "</code>" }
    /// The paragraph a section shows when it has nothing to list.
    private func empty(_ text: String) -> String { "<p class=\"empty\">" + e(text) + "</p>" }

    func render() -> String {
        let week = report.week.description
        let lastDay = Timestamp(secondsSinceEpoch: report.current.to.secondsSinceEpoch - 86_400)
        var page = """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="color-scheme" content="light">
            <title>Schema health \(e(week))</title>
            <style>\(Self.css)</style>
            </head>
            <body>
            <main>
            <header>
            <p class="eyebrow">Flowmeter · weekly schema-health report</p>
            <h1>Schema health <span class="week">\(e(week))</span></h1>
            <p class="scope">\(report.appID.map { "App " + code($0) } ?? "All apps") ·
            \(ReportFormatting.day(report.current.from)) to \(ReportFormatting.day(lastDay)) (UTC) · release builds ·
            compared with \(e(report.week.previous.description))</p>
            </header>

            """
        page += cards()
        page += actions()
        page += ungated()
        page += unknownChart()
        page += malformed()
        page += duplicates()
        page += versions()
        page += gates()
        page += manifestDrift()
        page += deploys()
        page += incidents()
        page += canary()
        page += expiringApprovals()
        page += newTypes()
        page += """
            <footer>Generated \(e(report.generatedAt.rfc3339String)) by <code>flowmeter report</code>.
            Counts of installs are HyperLogLog estimates (about 1.6% error). Debug builds never count.\(
                report.freshness.map { "<br>" + e($0).replacingOccurrences(of: "\n", with: "<br>") } ?? "")</footer>
            </main>
            </body>
            </html>

            """
        return page
    }

    private func section(_ id: String, _ title: String, note: String? = nil, _ body: String) -> String {
        var html = "<section id=\"\(id)\">\n<h2>\(title)</h2>\n"
        if let note { html += "<p class=\"note\">\(note)</p>\n" }
        return html + body + "\n</section>\n"
    }

    // MARK: summary

    private func cards() -> String {
        let (now, then) = (report.current, report.previous)
        let unknown = (now.events(.unknownType), then.events(.unknownType))
        var html = "<section id=\"summary\" class=\"cards\">\n"
        html += card(
            "Diagnostic events", ReportFormatting.count(now.totalEvents),
            ReportFormatting.change(now.totalEvents, from: then.totalEvents),
            tone: tone(now.totalEvents, then.totalEvents))
        html += card(
            "Unknown-type events", ReportFormatting.count(unknown.0),
            ReportFormatting.change(unknown.0, from: unknown.1), tone: tone(unknown.0, unknown.1))
        html += card(
            "Installs affected", ReportFormatting.count(now.installsAffected),
            ReportFormatting.change(now.installsAffected, from: then.installsAffected),
            tone: tone(now.installsAffected, then.installsAffected))
        let cleanTone: String
        switch (now.decodeCleanRate, then.decodeCleanRate) {
        case (let a?, let b?) where a > b + 0.0005: cleanTone = "good"
        case (let a?, let b?) where a < b - 0.0005: cleanTone = "bad"
        default: cleanTone = "flat"
        }
        html += card(
            "Decode-clean rate", ReportFormatting.percent(now.decodeCleanRate, places: 2),
            ReportFormatting.pointChange(now.decodeCleanRate, from: then.decodeCleanRate), tone: cleanTone)
        html += card(
            "Ungated types", String(now.ungatedTypes),
            ReportFormatting.change(Int64(now.ungatedTypes), from: Int64(then.ungatedTypes)),
            tone: tone(Int64(now.ungatedTypes), Int64(then.ungatedTypes)))
        html += "</section>\n"

        var rows = ""
        for kind in now.kinds(alongside: then) {
            let (a, b) = (now.eventsByKind[kind] ?? 0, then.eventsByKind[kind] ?? 0)
            rows += "<tr><td>\(code(kind))</td><td class=\"num\">\(ReportFormatting.count(a))</td>"
            rows += "<td class=\"num\">\(ReportFormatting.count(b))</td>"
            rows += "<td class=\"num \(tone(a, b))\">\(e(ReportFormatting.change(a, from: b)))</td></tr>\n"
        }
        rows += "<tr><td>installs</td><td class=\"num\">\(ReportFormatting.count(now.installs))</td>"
        rows += "<td class=\"num\">\(ReportFormatting.count(then.installs))</td>"
        rows += "<td class=\"num\">\(e(ReportFormatting.change(now.installs, from: then.installs)))</td></tr>\n"
        rows += "<tr><td>batches (clean)</td><td class=\"num\">\(ReportFormatting.count(now.batches)) "
        rows += "(\(ReportFormatting.count(now.cleanBatches)))</td><td class=\"num\">"
        rows += "\(ReportFormatting.count(then.batches)) (\(ReportFormatting.count(then.cleanBatches)))</td>"
        rows += "<td class=\"num\">\(e(ReportFormatting.change(now.batches, from: then.batches)))</td></tr>\n"
        return html
            + section(
                "kinds", "Events by kind",
                table(header: ["Kind", "This week", "Last week", "Change"], numeric: [1, 2, 3], rows: rows))
    }

    private func tone(_ current: Int64, _ previous: Int64) -> String {
        current > previous ? "bad" : current < previous ? "good" : "flat"
    }

    private func card(_ label: String, _ value: String, _ change: String, tone: String) -> String {
        """
        <div class="card"><div class="label">\(label)</div><div class="value">\(e(value))</div>\
        <div class="delta \(tone)">\(e(change)) <span>vs last week</span></div></div>

        """
    }

    // MARK: findings

    private func actions() -> String {
        guard !report.actions.isEmpty else {
            return section("actions", "Actions", empty("Nothing to do this week."))
        }
        var html = ""
        var shown = 0
        for group in report.actionsByTeam where shown < maxRows {
            if report.hasOwners {
                html += "<h3 class=\"team\">" + (group.team.map { "Team " + e($0) } ?? "No owner") + "</h3>\n"
            }
            html += "<ol class=\"actions\" start=\"\(shown + 1)\">\n"
            for action in group.actions.prefix(maxRows - shown) {
                shown += 1
                html += "<li class=\"\(action.kind.rawValue)\"><span class=\"sentence\">"
                for segment in action.segments {
                    switch segment {
                    case .text(let text): html += e(text)
                    case .code(let text): html += code(text)
                    case .value(let text): html += "<strong>" + e(text) + "</strong>"
                    }
                }
                html += "</span> <span class=\"meta\">"
                if showsApp { html += e(action.appID) + " · " }
                html += "\(ReportFormatting.count(action.events)) \(action.events == 1 ? "event" : "events") this week"
                html += "</span></li>\n"
            }
            html += "</ol>\n"
        }
        html += more(report.actions.count)
        return section(
            "actions", "Actions", note: report.hasOwners ? "By owning team (the owners file), most urgent first." : nil,
            html)
    }

    private func ungated() -> String {
        guard !report.ungated.isEmpty else {
            return section("ungated", "Ungated types", empty("No ungated types this week or last."))
        }
        var rows = ""
        for change in report.ungated.prefix(maxRows) {
            let type = change.finding
            rows += "<tr><td><span class=\"badge \(change.status.rawValue)\">\(change.status.rawValue)</span></td>"
            if showsApp { rows += "<td>\(code(type.appID))</td>" }
            rows += "<td>\(code(type.widgetType))</td>"
            rows += "<td class=\"num\">\(ReportFormatting.count(change.events))</td>"
            rows += "<td class=\"num\">\(ReportFormatting.count(change.previousEvents))</td>"
            let affected = type.affectedVersions.map {
                e($0.appVersion) + " <span class=\"dim\">" + ReportFormatting.percent($0.installShare) + "</span>"
            }
            rows += "<td>\(affected.isEmpty ? "–" : affected.joined(separator: ", "))</td>"
            if let typo = type.likelyTypoOf {
                rows += "<td>typo of \(code(typo))</td>"
            } else {
                rows += "<td>\(type.suggestedMinAppVersion.map { "≥ " + e($0) } ?? "–")</td>"
            }
            rows += "<td>\(type.suspectDeploy.map { code("\($0.service)@\($0.version)") } ?? "–")</td></tr>\n"
        }
        let header = [
            "Status", "Type", "Events", "Last week", "Affected versions (install share)", "Gate", "Suspect deploy",
        ]
        return section(
            "ungated", "Ungated types",
            note:
                "New: ungated this week only. Ongoing: both weeks. Resolved: last week only. Regressed: back this week "
                + "after at least 48 hours without a report (it had been gated or fixed).",
            table(header: header, numeric: [2, 3], appColumnAt: 1, rows: rows) + more(report.ungated.count))
    }

    private func unknownChart() -> String {
        let days = report.unknownByDay.days.map(ReportFormatting.shortDay)
        let series = report.unknownByDay.types.map { type in
            (
                label: type.widgetType.map { showsApp ? "\(type.appID ?? "") \($0)" : $0 } ?? "other types",
                events: type.events, isOther: type.widgetType == nil
            )
        }
        guard !series.isEmpty else {
            return section("daily", "Unknown types per day", empty("No unknownType events."))
        }
        return section(
            "daily", "Unknown types per day",
            "<figure class=\"chart wide\">" + ReportCharts.stackedDays(days: days, series: series) + "</figure>")
    }

    private func malformed() -> String {
        guard !report.malformed.isEmpty else {
            return section("malformed", "Malformed payloads", empty("No malformed payloads."))
        }
        var rows = ""
        var count = 0
        for group in report.malformed {
            for path in group.paths where count < maxRows {
                count += 1
                rows += "<tr>"
                if showsApp { rows += "<td>\(code(group.appID))</td>" }
                rows += "<td>\(code(group.widgetType))</td>"
                rows += "<td>\(path.codingPath.isEmpty ? "–" : code(path.codingPath))</td>"
                rows += "<td class=\"num\">\(ReportFormatting.count(path.events))</td>"
                rows +=
                    "<td>\(path.missingKeys.isEmpty ? "–" : path.missingKeys.map(code).joined(separator: ", "))</td>"
                rows += "<td>\(path.messages.map(e).joined(separator: "<br>"))</td></tr>\n"
            }
        }
        let header = ["Type", "Path", "Events", "Missing keys", "Messages"]
        return section(
            "malformed", "Malformed payloads",
            note: "Grouped by type and normalized coding path; a minute's events are split over the paths it sampled.",
            table(header: header, numeric: [2], appColumnAt: 0, rows: rows)
                + more(report.malformed.map(\.paths.count).reduce(0, +)))
    }

    private func duplicates() -> String {
        guard !report.duplicates.isEmpty else {
            return section("duplicates", "Duplicate ids", empty("No duplicate ids."))
        }
        var rows = ""
        for page in report.duplicates.prefix(maxRows) {
            rows += "<tr>"
            if showsApp { rows += "<td>\(code(page.appID))</td>" }
            rows += "<td>\(page.pageID.map(code) ?? "<span class=\"dim\">(unnamed)</span>")</td>"
            rows += "<td class=\"num\">\(ReportFormatting.count(page.events))</td>"
            rows += "<td>\(page.widgetTypes.map(code).joined(separator: ", "))</td>"
            rows += "<td>\(page.messages.map(e).joined(separator: "<br>"))</td></tr>\n"
        }
        let header = ["Page", "Events", "Types", "Examples"]
        return section(
            "duplicates", "Duplicate ids",
            table(header: header, numeric: [1], appColumnAt: 0, rows: rows) + more(report.duplicates.count))
    }

    private func versions() -> String {
        guard !report.versions.isEmpty else {
            return section("versions", "Versions", empty("No release traffic this week."))
        }
        let shown = Array(report.versions.prefix(12))
        let label = { (version: WeeklyReport.VersionHealth) in
            showsApp ? "\(version.appID) \(version.appVersion)" : version.appVersion
        }
        // Whole version names (the chart's margin grows to fit them); colour by how good the rate is.
        let adoption = ReportCharts.bars(
            title: "Adoption per version",
            rows: shown.map {
                (label: label($0), share: $0.adoption, caption: ReportFormatting.percent($0.adoption), color: "#4269d0")
            })
        let clean = ReportCharts.bars(
            title: "Decode-clean rate per version",
            rows: shown.map { version in
                let rate = version.decodeCleanRate
                let color = ReportCharts.goodness(rate)
                return (
                    label: label(version), share: rate, caption: ReportFormatting.percent(rate, places: 2), color: color
                )
            })
        var html = "<div class=\"pair\"><figure class=\"chart\"><figcaption>Adoption (share of installs)</figcaption>"
        html +=
            adoption + "</figure><figure class=\"chart\"><figcaption>Decode-clean rate (batches without diagnostics;"
        html += " green from 99%, amber at 90%, red at 50% and below)</figcaption>" + clean + "</figure></div>\n"
        var rows = ""
        for version in report.versions.prefix(maxRows) {
            rows += "<tr>"
            if showsApp { rows += "<td>\(code(version.appID))</td>" }
            rows += "<td>\(e(version.appVersion))</td>"
            rows += "<td class=\"num\">\(ReportFormatting.count(version.installs))</td>"
            rows += "<td class=\"num\">\(ReportFormatting.percent(version.adoption))</td>"
            rows +=
                "<td class=\"num\">\(e(ReportFormatting.change(version.installs, from: version.previousInstalls)))</td>"
            rows += "<td class=\"num\">\(ReportFormatting.percent(version.decodeCleanRate, places: 2))</td>"
            rows += "<td class=\"num\">\(ReportFormatting.count(version.batches))</td>"
            rows += "<td class=\"num\">\(ReportFormatting.count(version.events))</td>"
            rows += "<td class=\"num\">\(e(version.onDeviceLossText))</td></tr>\n"
        }
        let header = [
            "Version", "Installs", "Adoption", "Installs vs last week", "Decode-clean", "Batches", "Diagnostics",
            "Lost on device",
        ]
        html += table(header: header, numeric: Set(1...7), appColumnAt: 0, rows: rows)
        return section("versions", "Versions", html + more(report.versions.count))
    }

    private func deploys() -> String {
        let attributed = Set(report.deploys.flatMap(\.incidents))
        let chart = ReportCharts.timeline(
            from: report.current.from, to: report.current.to,
            deploys: report.deploys.map {
                (label: "\($0.deploy.service)@\($0.deploy.version)", at: $0.deploy.finishedAt)
            },
            spikes: report.incidents.map { incident in
                (
                    label:
                        "\(incident.widgetType) \(incident.kind.rawValue) "
                        + "×\(ReportFormatting.fixed(incident.ratio, places: 0))",
                    at: incident.onset, attributed: attributed.contains(incident)
                )
            })
        var html = "<figure class=\"chart wide\">" + chart
        html += "<figcaption>Deploys (blue) finish above the line; incidents start below it, red when attributed to "
        html += "a deploy.</figcaption></figure>\n"
        guard !report.deploys.isEmpty else {
            return section("deploys", "Deploys", html + empty("No deploys recorded this week."))
        }
        var rows = ""
        for impact in report.deploys.prefix(maxRows) {
            rows += "<tr><td>\(ReportFormatting.minute(impact.deploy.finishedAt))</td>"
            rows += "<td>\(code("\(impact.deploy.service)@\(impact.deploy.version)"))</td><td>"
            rows +=
                impact.incidents.isEmpty
                ? "–"
                : impact.incidents.map { incident in
                    code(incident.widgetType) + " " + e(incident.kind.rawValue) + " "
                        + e(FindingWording.reach(incident))
                        + " ×" + ReportFormatting.fixed(incident.ratio, places: 1)
                }.joined(separator: "<br>")
            rows += "</td><td>"
            rows +=
                impact.ungatedTypes.isEmpty
                ? "–" : impact.ungatedTypes.map { code($0.widgetType) }.joined(separator: ", ")
            rows += "</td></tr>\n"
        }
        html += table(
            header: ["Finished", "Deploy", "Incidents attributed", "Ungated types attributed"], numeric: [], rows: rows)
        return section("deploys", "Deploys", html + more(report.deploys.count))
    }

    private func incidents() -> String {
        guard !report.incidents.isEmpty else {
            return section("incidents", "Incidents", empty("No spikes."))
        }
        var rows = ""
        for incident in report.incidents.prefix(maxRows) {
            rows += "<tr><td>\(ReportFormatting.minute(incident.onset))</td>"
            if showsApp { rows += "<td>\(code(incident.appID))</td>" }
            rows += "<td>\(e(incident.kind.rawValue))</td><td>\(code(incident.widgetType))</td>"
            let versions = incident.versions.map {
                e($0.appVersion) + " <span class=\"dim\">" + ReportFormatting.count($0.count) + "</span>"
            }
            rows += "<td>\(versions.isEmpty ? "across versions" : versions.joined(separator: ", "))</td>"
            rows += "<td class=\"num\">\(ReportFormatting.count(incident.count))</td>"
            rows += "<td class=\"num\">\(ReportFormatting.fixed(incident.baseline, places: 1))</td>"
            rows += "<td>\(incident.suspectDeploy.map { code("\($0.service)@\($0.version)") } ?? "–")</td></tr>\n"
        }
        let header = ["Onset", "Kind", "Type", "Versions (peak)", "Peak (5 min)", "Baseline", "Suspect deploy"]
        return section(
            "incidents", "Incidents",
            note: "Spikes of one type and kind that overlap in time, across versions and in single versions, are one "
                + "incident.",
            table(header: header, numeric: [4, 5], appColumnAt: 1, rows: rows) + more(report.incidents.count))
    }

    private func gates() -> String {
        let title = "Gates you can drop soon"
        guard !report.gates.isEmpty else {
            return section("gates", title, empty("No version gates needed: every live version renders every type."))
        }
        var rows = ""
        for gate in report.gates.prefix(maxRows) {
            rows += "<tr>"
            if showsApp { rows += "<td>\(code(gate.appID))</td>" }
            rows += "<td>\(code(gate.widgetType))</td><td>≥ \(e(gate.minAppVersion))</td>"
            rows += "<td class=\"num\">\(ReportFormatting.percent(gate.belowShare))</td>"
            let trend = gate.trend.suffix(4).map { ReportFormatting.percent($0.belowShare) }
            rows += "<td>\(trend.isEmpty ? "–" : e(trend.joined(separator: " → ")))</td>"
            rows += "<td>\(e(FindingWording.canDrop(gate.forecast)))</td></tr>\n"
        }
        let threshold = ReportFormatting.percent(report.gates[0].forecast.threshold)
        let header = ["Type", "Gate", "Below today", "Weekly trend", "Can drop"]
        return section(
            "gates", title,
            note: "Types only some live versions render, from the manifests app builds upload, else the capabilities "
                + "apps send. Below: installs on "
                + "versions under the gate. Can drop: when that share is forecast to fall under \(threshold) (a "
                + "logistic fit to the daily shares of the last four weeks; it needs seven days of traffic).",
            table(header: header, numeric: [2], appColumnAt: 0, rows: rows) + more(report.gates.count))
    }

    private func canary() -> String {
        guard !report.canary.isEmpty else { return "" }
        var rows = ""
        for finding in report.canary.prefix(maxRows) {
            let rates = report.canaryRates[finding]
            rows += "<tr><td>\(code(finding.raising))</td><td>\(e(finding.kind.rawValue))</td>"
            rows += "<td>\(code(finding.widgetType))</td><td>\(e(finding.versions.joined(separator: ", ")))</td>"
            rows += "<td class=\"num\">\(ReportFormatting.count(finding.events))</td>"
            rows += "<td class=\"num\">\(e(WeeklyReport.CanaryRates.text(rates?.raising)))</td>"
            rows += "<td>\(code(finding.quiet))</td>"
            rows += "<td class=\"num\">\(e(WeeklyReport.CanaryRates.text(rates?.quiet)))</td></tr>\n"
        }
        return section(
            "canary", "Backend releases compared",
            note: "Two releases of one service served the same versions at the same time; the first raised this, the "
                + "second did not (or far less): blame by comparison (<code>flowmeter matrix</code>). Diag/1K: each "
                + "release's diagnostics per 1,000 of its decodes on those versions.",
            table(
                header: ["Raises", "Kind", "Type", "Versions", "Events", "Diag/1K", "Beside", "Its diag/1K"],
                numeric: [4, 5, 7], rows: rows)
                + more(report.canary.count))
    }

    private func expiringApprovals() -> String {
        guard !report.expiringApprovals.isEmpty else { return "" }
        var rows = ""
        for approval in report.expiringApprovals.prefix(maxRows) {
            rows += "<tr><td>\(code(approval.widgetType))</td><td>\(approval.key.map(code) ?? "")</td>"
            rows += "<td>\(e(approval.owner))</td><td>\(e(approval.expires))"
            rows += approval.isExpired ? " (expired: failing again)" : ""
            rows += "</td><td>\(e(approval.reason))</td></tr>\n"
        }
        return section(
            "approvals", "Check approvals expiring soon",
            table(header: ["Type", "Key", "Owner", "Expires", "Reason"], numeric: [], rows: rows)
                + more(report.expiringApprovals.count))
    }

    private func manifestDrift() -> String {
        guard report.manifestsChecked > 0 else { return "" }
        let title = "Manifests out of date"
        guard !report.manifestDrift.isEmpty else {
            return section(
                "manifests", title,
                empty("Every one of the \(report.manifestsChecked) manifests agrees with its version's traffic."))
        }
        var rows = ""
        for drift in report.manifestDrift.prefix(maxRows) {
            rows += "<tr>"
            if showsApp { rows += "<td>\(code(drift.appID))</td>" }
            rows += "<td>\(e(drift.appVersion))</td><td>\(e(drift.platform))</td><td>\(code(drift.widgetType))</td>"
            rows += "<td>\(e(FindingWording.drift(drift)))</td>"
            rows += "<td class=\"num\">\(ReportFormatting.count(drift.events))</td></tr>\n"
        }
        return section(
            "manifests", title,
            note: "Versions whose traffic contradicts the manifest their build uploaded: upload it again, generated "
                + "from the types the build registers (<code>flowmeter manifests check</code>).",
            table(header: ["Version", "Platform", "Type", "Drift", "Events"], numeric: [4], appColumnAt: 0, rows: rows)
                + more(report.manifestDrift.count))
    }

    private func newTypes() -> String {
        guard !report.newTypes.isEmpty else {
            return section("new-types", "New types", empty("No type was seen for the first time."))
        }
        var rows = ""
        for type in report.newTypes.prefix(maxRows) {
            rows += "<tr>"
            if showsApp { rows += "<td>\(code(type.appID))</td>" }
            rows += "<td>\(code(type.widgetType))</td><td>\(e(type.kind.rawValue))</td>"
            rows += "<td>\(ReportFormatting.minute(type.firstSeen))</td></tr>\n"
        }
        let header = ["Type", "First seen as", "First seen"]
        return section(
            "new-types", "New types", note: "Types whose first release occurrence ever lies in this week.",
            table(header: header, numeric: [], appColumnAt: 0, rows: rows) + more(report.newTypes.count))
    }

    /// A table whose cells carry their column's title (`data-label`), so a phone can show each row as a card.
    private func table(header: [String], numeric: Set<Int>, rows: String) -> String {
        var html = "<div class=\"table-scroll\"><table>\n<thead><tr>"
        for (index, title) in header.enumerated() {
            html += numeric.contains(index) ? "<th class=\"num\">\(title)</th>" : "<th>\(title)</th>"
        }
        return html + "</tr></thead>\n<tbody>\n" + Self.labelled(rows, header: header) + "</tbody>\n</table></div>"
    }

    /// `rows` with the n-th `<td` of every row given the n-th header as `data-label`. Cell content is escaped
    /// (`<` is `&lt;`), so every `<td` in `rows` is one of the writer's own tags.
    private static func labelled(_ rows: String, header: [String]) -> String {
        var output = ""
        for (index, row) in rows.components(separatedBy: "<tr").enumerated() {
            if index > 0 { output += "<tr" }
            var cells = row.components(separatedBy: "<td")
            for cell in cells.indices.dropFirst() {
                let title = cell - 1 < header.count ? header[cell - 1] : ""
                cells[cell] = " data-label=\"\(HTMLEscaping.escape(title))\"" + cells[cell]
            }
            output += cells.joined(separator: "<td")
        }
        return output
    }

    /// A table whose `App` column, shown only when the report spans several apps, goes at `appIndex`; `numeric`
    /// indexes the columns without it.
    private func table(header: [String], numeric: Set<Int>, appColumnAt appIndex: Int, rows: String) -> String {
        guard showsApp else { return table(header: header, numeric: numeric, rows: rows) }
        var withApp = header
        withApp.insert("App", at: appIndex)
        return table(header: withApp, numeric: Set(numeric.map { $0 >= appIndex ? $0 + 1 : $0 }), rows: rows)
    }

    private func more(_ total: Int) -> String {
        total > maxRows ? "<p class=\"note\">… and \(total - maxRows) more (see <code>--format json</code>).</p>\n" : ""
    }

    static let css = """

        :root { color-scheme: light; }
        * { box-sizing: border-box; }
        body { margin: 0; background: #f6f8fa; color: #1f2328;
          font: 14px/1.5 -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
        main { max-width: 1100px; margin: 24px auto; padding: 32px 40px; background: #fff;
          border: 1px solid #d0d7de; border-radius: 10px; }
        header { border-bottom: 3px solid #4269d0; padding-bottom: 12px; margin-bottom: 20px; }
        .eyebrow { margin: 0; color: #57606a; text-transform: uppercase; letter-spacing: .06em; font-size: 12px; }
        h1 { margin: 4px 0; font-size: 30px; }
        h1 .week { color: #4269d0; }
        .scope { margin: 0; color: #57606a; }
        h2 { font-size: 19px; margin: 28px 0 10px; padding-bottom: 4px; border-bottom: 1px solid #d8dee4; }
        .cards { display: grid; grid-template-columns: repeat(5, 1fr); gap: 12px; }
        .card { border: 1px solid #d0d7de; border-radius: 8px; padding: 12px 14px; background: #fbfcfd; }
        .card .label { color: #57606a; font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
        .card .value { font-size: 26px; font-weight: 650; margin: 2px 0; font-variant-numeric: tabular-nums; }
        .delta { font-size: 13px; font-weight: 600; }
        .delta span { color: #57606a; font-weight: 400; }
        .bad { color: #b42318; } .good { color: #1a7f37; } .flat { color: #57606a; }
        table { width: 100%; border-collapse: collapse; margin: 8px 0; font-size: 13px; }
        th { text-align: left; font-weight: 600; color: #57606a; border-bottom: 2px solid #d0d7de; padding: 6px 8px; }
        td { border-bottom: 1px solid #eaeef2; padding: 6px 8px; vertical-align: top; overflow-wrap: break-word; }
        .num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
        tbody tr:nth-child(even) td { background: #fafbfc; }
        code { font: 12.5px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: #eff2f5;
          padding: 1px 5px; border-radius: 4px; overflow-wrap: break-word; }
        /* Words are not split to squeeze a column: a table too wide for the screen scrolls sideways instead. */
        .table-scroll table { min-width: 100%; }
        td code { white-space: nowrap; }
        .badge { display: inline-block; white-space: nowrap; padding: 1px 8px; border-radius: 10px; font-size: 12px; font-weight: 600; }
        .badge.new { background: #ffebe9; color: #a40e26; }
        .badge.ongoing { background: #fff8c5; color: #7d4e00; }
        .badge.resolved { background: #dafbe1; color: #116329; }
        .badge.regressed { background: #a40e26; color: #fff; }
        h3.team { font-size: 15px; margin: 14px 0 4px; }
        .table-scroll { overflow-x: auto; }
        ol.actions { margin: 0; padding-left: 26px; }
        ol.actions li { margin: 6px 0; padding: 6px 10px; border-left: 4px solid #4269d0; background: #f6f8fa;
          border-radius: 0 6px 6px 0; }
        ol.actions li.gate, ol.actions li.fixTypo, ol.actions li.stopSending, ol.actions li.gateByCapability {
          border-left-color: #d03b2f; }
        ol.actions li.addMissingKey, ol.actions li.fixPayload { border-left-color: #efb118; }
        .actions .meta { color: #57606a; font-size: 12px; margin-left: 6px; }
        .note, figcaption { color: #57606a; font-size: 12.5px; margin: 4px 0 8px; }
        .empty { color: #57606a; font-style: italic; }
        .dim { color: #57606a; }
        figure.chart { margin: 8px 0 12px; }
        /* Wide charts keep readable text on a phone and scroll sideways instead of shrinking. */
        figure.chart.wide { overflow-x: auto; }
        figure.chart.wide svg { min-width: 600px; }
        .pair { display: grid; grid-template-columns: 1fr 1fr; gap: 20px; }
        footer { margin-top: 32px; padding-top: 10px; border-top: 1px solid #d8dee4; color: #57606a; font-size: 12px; }
        @page { size: A4; margin: 14mm; }
        @media print {
          body { background: #fff; font-size: 11px; }
          main { margin: 0; padding: 0; border: 0; max-width: none; }
          .cards { grid-template-columns: repeat(5, 1fr); }
          section { break-inside: avoid-page; }
          h2 { break-after: avoid-page; }
          #versions, #deploys { break-before: page; }
          tr, figure { break-inside: avoid; }
          tbody tr:nth-child(even) td { background: none; }
          * { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
        }
        @media (max-width: 800px) {
          main { padding: 16px; margin: 0; border-radius: 0; }
          .cards { grid-template-columns: repeat(2, 1fr); }
          .pair { grid-template-columns: 1fr; }
          h1 { font-size: 24px; }
          table { font-size: 12px; }
          th, td { padding: 5px 6px; }
          th { white-space: nowrap; }
        }
        /* A phone shows each table row as a card: the column titles go beside the values. */
        @media (max-width: 600px) {
          .table-scroll table, .table-scroll tbody, .table-scroll tr, .table-scroll td { display: block; width: 100%; }
          .table-scroll thead { display: none; }
          .table-scroll tr { border: 1px solid #d0d7de; border-radius: 6px; margin: 0 0 10px; padding: 6px 10px; }
          .table-scroll td, .table-scroll td.num { border: 0; padding: 3px 0; text-align: left; white-space: normal;
            background: none !important; }
          .table-scroll td::before { content: attr(data-label); display: block; color: #57606a; font-weight: 600;
            font-size: 11px; text-transform: uppercase; letter-spacing: .03em; }
          td code { white-space: normal; overflow-wrap: anywhere; }
        }

        """
}
