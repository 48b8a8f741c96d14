import Detector
import FlowmeterModels
import Foundation
import Lifecycle
import RollupStore
import Rollups

/// The console's pages: each reads the same queries as the read API (``ConsoleData``) and renders HTML; the incident
/// and type pages also read the store's buckets for their charts.
struct ConsoleViews: Sendable {
    let data: ConsoleData
    let storeURL: String
    let owners: OwnerRules?

    private static func e(_ text: String) -> String { HTMLEscaping.escape(text) }

    /// A section's opening and its `<h2>` (id `headingID`, which labels the section), the count after the title when
    /// given; the caller closes it with `</section>`.
    private static func sectionHead(_ headingID: String, _ title: String, count: Int? = nil) -> String {
        let counted = count.map { " <span class=\"count\">\($0)</span>" } ?? ""
        return "<section aria-labelledby=\"\(headingID)\"><h2 id=\"\(headingID)\">\(title)\(counted)</h2>\n"
    }

    /// A scrolling table's opening with `id` and its column headers (already HTML), up to `<tbody>`; rows follow,
    /// then ``tableFoot``.
    private static func tableHead(_ id: String, _ columns: [String]) -> String {
        "<div class=\"table-scroll\"><table id=\"\(id)\"><thead><tr>"
            + columns.map { "<th scope=\"col\">\($0)</th>" }.joined() + "</tr></thead><tbody>\n"
    }

    /// What closes a table ``tableHead(_:_:)`` opened.
    private static let tableFoot = "</tbody></table></div>\n"

    /// Now: ongoing incidents, ungated types, decode-clean rate per live version, freshness.
    func now(_ filters: ConsoleFilters) async throws(ConsoleData.Failure) -> String {
        let parameters = filters.queryParameters
        let spikes = try await data.json("spikes", parameters)
        let ungated = try await data.json("ungated", parameters)
        let versions = try await data.json("versions", parameters)
        var html = freshness(spikes.object("freshness"), from: spikes.string("from"), to: spikes.string("to"))
        let incidents = spikes.objects("incidents")
        html += Self.sectionHead("incidents-heading", "Incidents", count: incidents.count)
        if incidents.isEmpty {
            html += "<p class=\"empty\">No incident in this window.</p>\n"
        } else {
            html += Self.tableHead(
                "incidents", ["Type", "Kind", "App", "Versions", "Onset", "Count / baseline", "Suspect deploy", "Team"])
            for incident in incidents {
                let link = incidentLink(incident, filters)
                html += "<tr class=\"incident\"><td><a class=\"incident-link\" href=\"\(Self.e(link))\">"
                html += "\(Self.e(typeName(incident.string("widgetType"))))</a></td>"
                html += "<td>\(Self.e(incident.string("kind")))</td><td>\(Self.e(incident.string("appID")))</td>"
                html += "<td>\(Self.e(Self.versions(incident).joined(separator: ", ")))</td>"
                html += "<td>\(Self.e(Self.time(incident.string("onset"))))</td>"
                html += "<td>\(incident.integer("count")) / \(Self.decimal(incident.number("baseline")))</td>"
                html += "<td>\(deployCell(incident.object("suspectDeploy"), filters))</td>"
                html += "<td>\(Self.e(team(incident) ?? "–"))</td></tr>\n"
            }
            html += Self.tableFoot
        }
        html += "</section>\n"
        let types = ungated.objects("ungated")
        html += Self.sectionHead("ungated-heading", "Ungated types", count: types.count)
        if types.isEmpty {
            html += "<p class=\"empty\">No ungated type in this window.</p>\n"
        } else {
            html += Self.tableHead(
                "ungated", ["Type", "Status", "App", "Events", "Installs", "Suggested gate", "Suspect deploy", "Team"])
            for type in types {
                let gate = type.object("suggestedGate").map { "≥ " + $0.string("minAppVersion") }
                let typo = type.optionalString("likelyTypoOf").map { " (typo of \($0)?)" } ?? ""
                html +=
                    "<tr><td><a href=\"\(Self.e(typeLink(type.string("appID"), type.string("widgetType"), filters)))\">"
                html += "\(Self.e(typeName(type.string("widgetType"))))</a>\(Self.e(typo))</td>"
                html += "<td><span class=\"status status-\(Self.e(type.string("status")))\">"
                html += "\(Self.e(type.string("status")))</span></td>"
                html += "<td>\(Self.e(type.string("appID")))</td><td>\(type.integer("events"))</td>"
                html += "<td>\(type.integer("installs"))</td><td>\(Self.e(gate ?? "none renders it"))</td>"
                html += "<td>\(deployCell(type.object("suspectDeploy"), filters))</td>"
                html += "<td>\(Self.e(team(type) ?? "–"))</td></tr>\n"
            }
            html += Self.tableFoot
        }
        html += "</section>\n"
        let rows = versions.objects("versions").filter { $0.integer("batches") > 0 }
        html += Self.sectionHead("versions-heading", "Decode-clean rate by live version")
        if rows.isEmpty {
            html += "<p class=\"empty\">No traffic in this window.</p>\n"
        } else {
            let bars: [(label: String, share: Double?, caption: String, color: String)] = rows.prefix(24).map { row in
                let rate = row.number("decodeCleanRate")
                return (
                    label: "\(row.string("appID")) \(row.string("appVersion"))", share: rate,
                    caption: rate.map { ReportFormatting.fixed($0 * 100, places: 1) + "%" } ?? "–",
                    color: ReportCharts.goodness(rate)
                )
            }
            html +=
                "<figure class=\"chart-card\">" + ReportCharts.bars(title: "Decode-clean rate by version", rows: bars)
            html += "<figcaption>Share of batches that decoded without a diagnostic, per app version.</figcaption>"
            html += "</figure>\n"
        }
        html += "</section>\n"
        html += cli("flowmeter spikes \(filters.commandLineOptions)")
        return html
    }

    /// An incident: the chart with baseline and deploys, versions, samples, releases, suspect deploy, team.
    func incident(_ filters: ConsoleFilters, kind: String, type: String, onset: String?)
        async throws(ConsoleData.Failure) -> (title: String, html: String)
    {
        guard let app = filters.app else { throw ConsoleData.Failure(status: 400, message: "app: name the app.") }
        let spikes = try await data.json("spikes", filters.queryParameters)
        let matching = spikes.objects("incidents").filter {
            $0.string("kind") == kind && $0.string("widgetType") == type && $0.string("appID") == app
        }
        guard let incident = matching.first(where: { onset == nil || $0.string("onset") == onset }) ?? matching.first
        else {
            throw ConsoleData.Failure(
                status: 404, message: "No \(kind) incident of \(typeName(type)) in \(app) in this window.")
        }
        let onsetTime = Timestamp(rfc3339: incident.string("onset")) ?? Timestamp(Date())
        let windowFrom = Timestamp(rfc3339: spikes.string("from")) ?? onsetTime
        let windowTo = Timestamp(rfc3339: spikes.string("to")) ?? onsetTime
        let chartFrom = max(windowFrom, Timestamp(secondsSinceEpoch: onsetTime.secondsSinceEpoch - 3 * 3600))
        let chartTo = min(windowTo, Timestamp(secondsSinceEpoch: onsetTime.secondsSinceEpoch + 3 * 3600))
        guard let diagnosticKind = DiagnosticKind(rawValue: kind) else {
            throw ConsoleData.Failure(status: 400, message: "kind: '\(kind)' is not a diagnostic kind.")
        }
        let storeURL = storeURL
        let bucketSeconds: Int64 = 300
        let releases = incident.strings("backendReleases")
        let comparedService = Dictionary(grouping: releases, by: CanaryComparison.service(of:)).values.contains {
            $0.count >= 2
        }
        let read = try? await onThread(named: "flowmeter-console") {
            () throws -> (buckets: [SeriesBucket], samples: [RollupSample], compared: ComparedReleases?) in
            let store = try openRollupStore(url: storeURL)
            let query = SeriesQuery(
                from: chartFrom, to: chartTo, appID: app, kinds: [diagnosticKind], widgetTypes: [type],
                buildConfiguration: .release)
            let buckets = try store.seriesBuckets(query, bucketSeconds: bucketSeconds)
            var onsetQuery = query
            onsetQuery.from = onsetTime
            onsetQuery.to = min(chartTo, Timestamp(secondsSinceEpoch: onsetTime.secondsSinceEpoch + 3600))
            var samples: [RollupSample] = []
            for rollup in try store.seriesRollups(onsetQuery) {
                for sample in rollup.samples where !samples.contains(sample) && samples.count < 10 {
                    samples.append(sample)
                }
            }
            // Two releases of one service carried it: the canary comparison over the hours from the onset, with
            // each release's diagnostics per 1,000 of its decodes (`flowmeter matrix`).
            var compared: ComparedReleases?
            if comparedService {
                let span = SeriesQuery(from: onsetTime, to: chartTo, appID: app, buildConfiguration: .release)
                let appSeries = try store.seriesRollups(span)
                let comparison = CanaryComparison(rollups: appSeries)
                if let finding = comparison.findings.first(where: {
                    $0.appID == app && $0.kind == diagnosticKind && $0.widgetType == type
                        && releases.contains($0.raising)
                }) {
                    let rows = MatrixCommand.rows(
                        series: appSeries, versions: try store.versionRollups(from: onsetTime, to: chartTo, appID: app))
                    compared = ComparedReleases(
                        finding: finding, rates: MatrixCommand.canaryRates([finding], rows: rows)[finding])
                }
            }
            return (buckets, samples, compared)
        }
        var perVersion: [String: [Int64: Int64]] = [:]
        for bucket in read?.buckets ?? [] {
            perVersion[bucket.series.appVersion, default: [:]][bucket.bucketStart, default: 0] += bucket.events
        }
        let series = perVersion.sorted { $0.value.values.reduce(0, +) > $1.value.values.reduce(0, +) }.prefix(6)
            .map { (label: $0.key, counts: $0.value) }
        var deployParameters: [(name: String, value: String?)] = [
            (name: "from", value: chartFrom.rfc3339String), (name: "to", value: chartTo.rfc3339String),
        ]
        if chartFrom >= chartTo { deployParameters = [(name: "since", value: "24h")] }
        let deploys = (try? await data.json("deploys", deployParameters))?.objects("deploys") ?? []
        let markers = deploys.compactMap { deploy -> (label: String, at: Timestamp)? in
            Timestamp(rfc3339: deploy.string("finishedAt")).map {
                (label: "\(deploy.string("service"))@\(deploy.string("version"))", at: $0)
            }
        }
        let title = "\(typeName(type)) · \(kind)"
        var html = "<p class=\"lede\">\(Self.e(app)): \(Self.e(FindingWordingText.reach(incident))), onset "
        html += "\(Self.e(Self.time(incident.string("onset")))), peak bucket "
        html += "\(Self.e(Self.time(incident.string("peakWindowStart")))): \(incident.integer("count")) events "
        html += "against a baseline of \(Self.decimal(incident.number("baseline"))) "
        html += "(\(Self.decimal(incident.number("ratio")))×).</p>\n"
        html += "<figure class=\"chart-card\" id=\"incident-chart\">"
        html += ReportCharts.incident(
            from: chartFrom, to: chartTo, bucketSeconds: bucketSeconds, series: series,
            baseline: incident.number("baseline") ?? 0, onset: onsetTime, deploys: markers,
            suspect: incident.object("suspectDeploy").map { "\($0.string("service"))@\($0.string("version"))" })
        html += "<figcaption>Events per 5 minutes by app version (release builds), the baseline dashed, deploys as "
        html += "vertical lines.</figcaption></figure>\n"
        html += "<dl class=\"facts\">\n"
        html += "<dt>Versions hit</dt><dd>\(Self.e(Self.versions(incident).joined(separator: ", ")))</dd>\n"
        html +=
            "<dt>Backend releases</dt><dd>\(Self.e(releases.isEmpty ? "none carried" : releases.joined(separator: ", ")))</dd>\n"
        html += "<dt>Suspect deploy</dt><dd>\(deployCell(incident.object("suspectDeploy"), filters))"
        if let deploy = incident.object("suspectDeploy") {
            html +=
                "<br><span class=\"why\">\(Self.e(why(deploy, releases: releases, compared: read?.compared)))</span>"
        }
        if let compared = read?.compared {
            let finding = compared.finding
            let rate = { (value: Double?) in
                value.map { "\(Self.decimal($0)) diagnostics per 1,000 of its decodes there" }
                    ?? "no decodes of its own"
            }
            html += "<dt>Releases compared</dt><dd id=\"releases-compared\">\(Self.e(finding.raising)) raises it on "
            html += "\(Self.e(finding.versions.joined(separator: ", "))) (\(finding.events) events; "
            html += "\(Self.e(rate(compared.rates?.raising)))); \(Self.e(finding.quiet)), serving the same versions at "
            html +=
                "the same time, \(finding.quietRate == 0 ? "does not" : "far less") (\(Self.e(rate(compared.rates?.quiet))))."
            html += "</dd>\n"
        }
        html += "</dd>\n<dt>Team</dt><dd>\(Self.e(team(incident) ?? "no owner rule"))</dd>\n"
        html +=
            "<dt>Type</dt><dd><a href=\"\(Self.e(typeLink(app, type, filters)))\">\(Self.e(typeName(type)))</a></dd>\n"
        html += "</dl>\n"
        let samples = read?.samples ?? []
        html += Self.sectionHead("samples-heading", "Sampled paths and messages")
        if samples.isEmpty {
            html += "<p class=\"empty\">No samples kept for this incident's first hour.</p>\n"
        } else {
            html += Self.tableHead("samples", ["Coding path", "Message", "Page"])
            for sample in samples {
                html += "<tr><td><code>\(Self.e(sample.codingPath))</code></td><td>\(Self.e(sample.message ?? ""))</td>"
                html += "<td>\(Self.e(sample.pageID ?? ""))</td></tr>\n"
            }
            html += Self.tableFoot
        }
        html += "</section>\n"
        var command = filters
        command.app = app
        html += cli("flowmeter spikes \(command.commandLineOptions)")
        return (title, html)
    }

    /// A type: versions rendering it, diagnostics by kind over weeks, its gate, its incidents.
    func type(_ filters: ConsoleFilters, type: String) async throws(ConsoleData.Failure) -> String {
        guard let app = filters.app else { throw ConsoleData.Failure(status: 400, message: "app: name the app.") }
        let parameters = filters.queryParameters
        let types = try await data.json("types", parameters)
        let row = types.objects("types").first { $0.string("widgetType") == type }
        let ungated = try await data.json("ungated", parameters).objects("ungated").first {
            $0.string("widgetType") == type
        }
        let gate = try await data.json("gates", parameters).objects("gates").first { $0.string("widgetType") == type }
        let incidents = try await data.json("spikes", parameters).objects("incidents").filter {
            $0.string("widgetType") == type
        }
        var html = "<dl class=\"facts\">\n"
        if let row {
            html += "<dt>Registered by</dt><dd>\(Self.e(list(row.strings("registeringVersions"))))</dd>\n"
            html += "<dt>Rendered by</dt><dd>\(Self.e(list(row.strings("renderingVersions"))))</dd>\n"
            html += "<dt>Unknown in</dt><dd>\(Self.e(list(row.strings("unknownIn"))))</dd>\n"
            if let sources = row.object("sources") {
                let known = sources.keys.sorted().map { "\($0): \(list(sources.strings($0)))" }
                html += "<dt>Known from</dt><dd>\(Self.e(known.joined(separator: "; ")))</dd>\n"
            }
        } else {
            html += "<dt>Versions</dt><dd>No traffic of this type in the window.</dd>\n"
        }
        if let ungated {
            let suggested = ungated.object("suggestedGate").map { "gate it at ≥ " + $0.string("minAppVersion") }
            html += "<dt>Ungated</dt><dd><span class=\"status status-\(Self.e(ungated.string("status")))\">"
            html += "\(Self.e(ungated.string("status")))</span> \(Self.e(suggested ?? "no version renders it"))</dd>\n"
        }
        if let gate {
            let forecast = gate.object("forecast")
            html += "<dt>Gate</dt><dd>≥ \(Self.e(gate.string("minAppVersion"))); "
            html +=
                "\(ReportFormatting.fixed((gate.number("belowShare") ?? 0) * 100, places: 1))% of installs below it; "
            html += "droppable \(Self.e(forecast?.optionalString("date").map(Self.time) ?? "not yet forecast"))</dd>\n"
        } else {
            html += "<dt>Gate</dt><dd>No gate to drop in this window.</dd>\n"
        }
        html += "</dl>\n"
        let storeURL = storeURL
        let now = Timestamp(Date())
        let week: Int64 = 7 * 86_400
        let weeksFrom = Timestamp(secondsSinceEpoch: (now.secondsSinceEpoch / week - 7) * week)
        let buckets =
            (try? await onThread(named: "flowmeter-console") { () throws -> [SeriesBucket] in
                let store = try openRollupStore(url: storeURL)
                return try store.seriesBuckets(
                    SeriesQuery(
                        from: weeksFrom, to: now, appID: app, widgetTypes: [type], buildConfiguration: .release),
                    bucketSeconds: week)
            }) ?? []
        var byKind: [String: [Int64: Int64]] = [:]
        for bucket in buckets {
            byKind[bucket.series.kind.rawValue, default: [:]][bucket.bucketStart, default: 0] += bucket.events
        }
        html += Self.sectionHead("weeks-heading", "Diagnostics by kind, by week")
        if byKind.isEmpty {
            html += "<p class=\"empty\">No diagnostics of this type in the last 8 weeks.</p>\n"
        } else {
            let starts = stride(from: weeksFrom.secondsSinceEpoch, to: now.secondsSinceEpoch, by: Int(week)).map { $0 }
            html += "<div class=\"table-scroll\"><table id=\"weeks\"><thead><tr><th scope=\"col\">Kind</th>"
            for start in starts {
                html +=
                    "<th scope=\"col\">\(Self.e(String(Timestamp(secondsSinceEpoch: start).rfc3339String.prefix(10))))</th>"
            }
            html += "</tr></thead><tbody>\n"
            for (kind, counts) in byKind.sorted(by: { $0.key < $1.key }) {
                html += "<tr><th scope=\"row\">\(Self.e(kind))</th>"
                for start in starts { html += "<td>\(counts[start] ?? 0)</td>" }
                html += "</tr>\n"
            }
            html += Self.tableFoot
        }
        html += "</section>\n" + Self.sectionHead("type-incidents", "Incidents")
        html +=
            incidents.isEmpty
            ? "<p class=\"empty\">No incident in this window.</p>\n" : incidentList(incidents, filters)
        html += "</section>\n"
        var command = filters
        command.app = app
        html += cli("flowmeter types \(command.commandLineOptions)")
        return html
    }

    /// Deploys: a timeline, each deploy with the incidents attributed to it.
    func deploys(_ filters: ConsoleFilters) async throws(ConsoleData.Failure) -> String {
        let parameters = filters.queryParameters.filter { $0.name != "app" && $0.name != "team" }
        let deploys = try await data.json("deploys", parameters).objects("deploys")
        let incidents = try await data.json("spikes", filters.queryParameters).objects("incidents")
        var html = ""
        if deploys.isEmpty {
            html += "<p class=\"empty\">No deploy in this window.</p>\n"
        } else {
            html += "<ol class=\"timeline\" id=\"deploys\">\n"
            for deploy in deploys.reversed() {
                let name = "\(deploy.string("service"))@\(deploy.string("version"))"
                let attributed = incidents.filter { incident in
                    incident.object("suspectDeploy").map { "\($0.string("service"))@\($0.string("version"))" } == name
                }
                html += "<li id=\"\(Self.e(Self.anchor(name)))\" class=\"deploy\"><h2>\(Self.e(name))</h2>"
                html += "<p>finished \(Self.e(Self.time(deploy.string("finishedAt"))))"
                if let environment = deploy.optionalString("environment") { html += " · \(Self.e(environment))" }
                if let commit = deploy.optionalString("commit") { html += " · commit <code>\(Self.e(commit))</code>" }
                html += "</p>"
                html +=
                    attributed.isEmpty
                    ? "<p class=\"empty\">No incident attributed.</p>" : incidentList(attributed, filters)
                html += "</li>\n"
            }
            html += "</ol>\n"
        }
        var window = filters
        window.app = nil
        window.team = nil
        html += cli("flowmeter deploys list \(window.commandLineOptions)")
        return html
    }

    /// Gates: the gates that can be dropped and when.
    func gates(_ filters: ConsoleFilters) async throws(ConsoleData.Failure) -> String {
        let gates = try await data.json("gates", filters.queryParameters).objects("gates")
        guard !gates.isEmpty else { return "<p class=\"empty\">No gate in this window.</p>\n" + cli("flowmeter gates") }
        var html = Self.tableHead("gates", ["Type", "App", "Gate", "Installs below", "Droppable"])
        for gate in gates {
            html += "<tr><td><a href=\"\(Self.e(typeLink(gate.string("appID"), gate.string("widgetType"), filters)))\">"
            html += "\(Self.e(typeName(gate.string("widgetType"))))</a></td><td>\(Self.e(gate.string("appID")))</td>"
            html += "<td>≥ \(Self.e(gate.string("minAppVersion")))</td>"
            html += "<td>\(ReportFormatting.fixed((gate.number("belowShare") ?? 0) * 100, places: 1))%</td>"
            let date = gate.object("forecast")?.optionalString("date").map(Self.time) ?? "not yet forecast"
            html += "<td>\(Self.e(date))</td></tr>\n"
        }
        return html + Self.tableFoot + cli("flowmeter gates \(filters.commandLineOptions)")
    }

    /// Manifests: every build's uploaded manifest.
    func manifests(_ filters: ConsoleFilters) async throws(ConsoleData.Failure) -> String {
        let parameters = filters.queryParameters.filter { $0.name == "app" }
        let manifests = try await data.json("manifests", parameters).objects("manifests")
        guard !manifests.isEmpty else {
            return "<p class=\"empty\">No manifest uploaded.</p>\n" + cli("flowmeter manifests list")
        }
        var html = Self.tableHead("manifests", ["App", "Version", "Platform", "Build", "Types", "Uploaded"])
        for manifest in manifests {
            html += "<tr><td>\(Self.e(manifest.string("appID")))</td><td>\(Self.e(manifest.string("appVersion")))</td>"
            html +=
                "<td>\(Self.e(manifest.string("platform")))</td><td>\(Self.e(manifest.optionalString("build") ?? "–"))</td>"
            html += "<td>\(manifest.object("types")?.count ?? 0)</td>"
            html += "<td>\(Self.e(manifest.optionalString("uploadedAt").map(Self.time) ?? "–"))</td></tr>\n"
        }
        let app = filters.app.map { " --app \($0)" } ?? ""
        html += Self.tableFoot
        let window = filters.queryParameters.filter { $0.name != "team" }
        let drift = try await data.json("manifest-drift", window).objects("drift")
        html += Self.sectionHead("drift-heading", "Drift", count: drift.count)
        if drift.isEmpty {
            html += "<p class=\"empty\">Every manifest agrees with its version's traffic in this window.</p>\n"
        } else {
            html += "<p>Builds whose manifest says one thing while their traffic says another: upload the build's "
            html += "manifest again, generated from the types it registers.</p>\n"
            html += Self.tableHead("drift", ["App", "Version", "Platform", "Type", "Drift", "Events"])
            for entry in drift {
                let key = entry.optionalString("key").map { " (\($0))" } ?? ""
                html += "<tr><td>\(Self.e(entry.string("appID")))</td><td>\(Self.e(entry.string("appVersion")))</td>"
                html += "<td>\(Self.e(entry.string("platform")))</td><td>\(Self.e(entry.string("widgetType")))</td>"
                html += "<td>\(Self.e(entry.string("reason") + key))</td><td>\(entry.integer("events"))</td></tr>\n"
            }
            html += Self.tableFoot
        }
        html += "</section>\n"
        return html + cli("flowmeter manifests list\(app); flowmeter manifests check \(filters.commandLineOptions)")
    }

    /// Reports: a link to every week's report, newest first.
    func reports(_ filters: ConsoleFilters, weeks: Int = 12) -> String {
        var week = ISOWeek(containing: Timestamp(Date()))
        var html = "<ul class=\"reports\" id=\"reports\">\n"
        for index in 0..<weeks {
            var query: [(String, String)] = [("week", "\(week)")]
            if let app = filters.app { query.append(("app", app)) }
            let link =
                "/console/report?"
                + query.map { "\($0.0)=\(ConsoleFilters.percentEncoded($0.1))" }.joined(separator: "&")
            html += "<li><a href=\"\(Self.e(link))\">\(Self.e("\(week)"))</a>\(index == 0 ? " (so far)" : "")</li>\n"
            week = ISOWeek(containing: Timestamp(secondsSinceEpoch: week.start.secondsSinceEpoch - 86_400))
        }
        return html + "</ul>\n"
            + cli("flowmeter report --week \(ISOWeek.lastComplete(before: Timestamp(Date()))) --format html")
    }

    // MARK: pieces

    private func incidentList(_ incidents: [[String: Any]], _ filters: ConsoleFilters) -> String {
        var html = "<ul class=\"incidents\">"
        for incident in incidents {
            html += "<li><a class=\"incident-link\" href=\"\(Self.e(incidentLink(incident, filters)))\">"
            html += "\(Self.e(typeName(incident.string("widgetType")))) \(Self.e(incident.string("kind")))</a> in "
            html += "\(Self.e(incident.string("appID"))), onset \(Self.e(Self.time(incident.string("onset"))))</li>"
        }
        return html + "</ul>\n"
    }

    private func incidentLink(_ incident: [String: Any], _ filters: ConsoleFilters) -> String {
        var linked = filters
        linked.app = incident.string("appID")
        return "/console/incident"
            + linked.query([
                ("kind", incident.string("kind")), ("type", incident.string("widgetType")),
                ("onset", incident.string("onset")),
            ])
    }

    private func typeLink(_ app: String, _ type: String, _ filters: ConsoleFilters) -> String {
        var linked = filters
        linked.app = app
        return "/console/type" + linked.query([("type", type)])
    }

    private func deployCell(_ deploy: [String: Any]?, _ filters: ConsoleFilters) -> String {
        guard let deploy else { return "none" }
        let name = "\(deploy.string("service"))@\(deploy.string("version"))"
        let link = "/console/deploys" + filters.query() + "#" + Self.anchor(name)
        return "<a class=\"deploy-link\" href=\"\(Self.e(link))\">\(Self.e(name))</a>"
    }

    /// A canary finding behind an incident, with its releases' diagnostics per 1,000 decodes.
    struct ComparedReleases: Sendable {
        var finding: CanaryComparison.Finding
        var rates: WeeklyReport.CanaryRates?
    }

    private func why(_ deploy: [String: Any], releases: [String], compared: ComparedReleases?) -> String {
        let name = "\(deploy.string("service"))@\(deploy.string("version"))"
        let lag = deploy.integer("lagSeconds")
        if let compared, compared.finding.raising == name {
            return "Chosen by comparison: its release raises this where \(compared.finding.quiet), serving the same "
                + "versions at the same time, does not."
        }
        if releases.contains(name) {
            return "Chosen because the incident's earliest events carry its release, \(name)."
        }
        return "Chosen as the deploy that finished closest before the onset (\(SpikesCommand.lag(lag)))."
    }

    private func team(_ finding: [String: Any]) -> String? {
        owners?.team(appID: finding.string("appID"), widgetType: finding.string("widgetType"))
    }

    private func freshness(_ note: [String: Any]?, from: String, to: String) -> String {
        var html =
            "<p class=\"freshness\" id=\"freshness\">Window \(Self.e(Self.time(from))) – \(Self.e(Self.time(to))) UTC"
        if let note {
            let complete = note.optionalString("completeUpTo").map(Self.time) ?? "unknown"
            html += " · data complete up to \(Self.e(complete))"
            if (note["windowComplete"] as? Bool) == false {
                html += " <span class=\"status status-new\">partial</span>"
            }
        }
        return html + "</p>\n"
    }

    private func cli(_ command: String) -> String {
        "<p class=\"cli\">The same view in a terminal: <code>\(Self.e(command))</code></p>\n"
    }

    private func list(_ items: [String]) -> String { items.isEmpty ? "none" : items.joined(separator: ", ") }

    private func typeName(_ type: String) -> String { type.isEmpty ? "(no type)" : type }

    /// `2026-11-30 08:47` from an RFC 3339 time.
    static func time(_ text: String) -> String {
        guard let instant = Timestamp(rfc3339: text) else { return text }
        let stamp = instant.rfc3339String
        return String(stamp.prefix(10)) + " " + ReportCharts.shortTime(instant)
    }

    static func decimal(_ value: Double?) -> String {
        value.map { ReportFormatting.fixed($0, places: 1) } ?? "–"
    }

    /// The app versions an incident hit (its `versions` entries' `appVersion`; absent for one across versions).
    static func versions(_ incident: [String: Any]) -> [String] {
        let names = incident.objects("versions").map { $0.string("appVersion") }.filter { !$0.isEmpty }
        return names.isEmpty ? ["all versions"] : names
    }

    /// An element id for a deploy named `service@version`.
    static func anchor(_ name: String) -> String {
        "deploy-" + String(name.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." ? $0 : "_" })
    }
}

/// How many versions an incident hit, in words, from its JSON.
enum FindingWordingText {
    static func reach(_ incident: [String: Any]) -> String {
        let count = ConsoleViews.versions(incident).count
        return count == 1 ? "1 version" : "\(count) versions"
    }
}
