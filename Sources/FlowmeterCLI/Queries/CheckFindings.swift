import Detector
import FlowmeterModels

/// One thing `flowmeter check` found in one payload, flattened for CI (SARIF, JUnit, GitHub annotations): a rule, a
/// level, a message and the place in the payload's file.
struct CheckFinding: Sendable, Hashable {
    /// How much it matters to CI.
    enum Level: String, Sendable, Hashable {
        /// Over the threshold, unapproved: fails the check.
        case error
        /// Under the threshold: shown, does not fail.
        case warning
        /// Approved, or nothing to judge against: shown, does not fail.
        case note
    }

    /// The rule: `unknownType`, `malformedPayload`, `arrangementFallback` or `noTraffic`.
    var ruleID: String
    var level: Level
    var message: String
    /// The payload's name (``CheckPayload/name``).
    var payload: String
    /// The file CI shows it in.
    var uri: String
    /// The line in `uri`.
    var line: Int
    /// The coding path in the payload.
    var codingPath: String
    var widgetType: String
    var appID: String?
    var key: String?
    /// The approval that covers it, when one does (expired or not).
    var approval: CheckApprovals.Approval?
    /// Whether `approval` had expired: the finding fails again.
    var approvalExpired = false

    /// Whether it fails the check.
    var fails: Bool { level == .error }

    /// The rules, for SARIF's `tool.driver.rules`: id, short description, help.
    static let rules: [(id: String, name: String, text: String)] = [
        (
            "unknownType", "UnknownWidgetType",
            "App versions in use do not register this widget type: they skip it or draw a placeholder."
        ),
        (
            "malformedPayload", "MissingRequiredKey",
            "A widget lacks a key that the manifests of app versions in use require: they fail to decode it."
        ),
        (
            "arrangementFallback", "UnknownArrangement",
            "A section arrangement some app versions do not know: they lay the section out vertically."
        ),
        (
            "noTraffic", "NothingToJudgeAgainst",
            "No app version had traffic in the window and no manifest describes one: the payload was not judged."
        ),
    ]

    /// The findings of one payload's report: each type's problems (errors over the threshold, warnings under it),
    /// arrangements that fall back (warnings), and with no traffic at all, what the manifests say exactly (errors) or
    /// that nothing was judged (notes).
    static func findings(
        of report: CheckReport, payload: CheckPayload, page: PageWalker.Page, lines: CheckLineIndex,
        manifestsWithoutTraffic: [String: [String: ManifestIndex.VersionShape]]
    ) -> [CheckFinding] {
        var found: [CheckFinding] = []
        func add(
            _ rule: String, _ level: Level, _ message: String, path: String, type: String, app: String?,
            key: String?
        ) {
            found.append(
                CheckFinding(
                    ruleID: rule, level: level, message: message, payload: payload.name, uri: payload.uri,
                    line: lines.line(of: path), codingPath: path, widgetType: type, appID: app, key: key))
        }
        let percent = { (share: Double) in CellFormat.percent(share) }
        for type in report.types {
            for problem in type.problems {
                let level: Level = problem.installShare > report.maxUnknownShare ? .error : .warning
                let versions = problem.versions.joined(separator: ", ")
                if problem.kind == .unknownType {
                    var message =
                        "Widget type '\(type.widgetType)' is unknown to \(percent(problem.installShare)) of "
                        + "\(problem.appID)'s installs (versions \(versions))."
                    if let typo = type.likelyTypoOf { message += " Did you mean '\(typo)'?" }
                    add(
                        "unknownType", level, message, path: problem.path, type: type.widgetType,
                        app: problem.appID, key: nil)
                } else {
                    let key = problem.key ?? ""
                    add(
                        "malformedPayload", level,
                        "Widget type '\(type.widgetType)' lacks '\(key)', which \(problem.appID) \(versions) "
                            + "\(problem.versions.count == 1 ? "requires" : "require") "
                            + "(\(percent(problem.installShare)) of installs).",
                        path: problem.path, type: type.widgetType, app: problem.appID, key: key)
                }
            }
        }
        for arrangement in report.arrangements {
            for app in arrangement.apps {
                add(
                    "arrangementFallback", .warning,
                    "Arrangement '\(arrangement.arrangement)' falls back to vertical on \(app.appID) "
                        + "\(app.versions.joined(separator: ", ")) (\(percent(app.installShare)) of installs).",
                    path: arrangement.paths.first ?? "page", type: arrangement.arrangement, app: app.appID, key: nil)
            }
        }
        guard !report.hasLiveVersions else { return found }
        // No traffic: the manifests answer exactly, version by version; without them nothing is known.
        var occurrences: [String: [PageWalker.Occurrence]] = [:]
        for occurrence in page.occurrences { occurrences[occurrence.widget.type, default: []].append(occurrence) }
        if manifestsWithoutTraffic.isEmpty {
            for type in occurrences.keys.sorted() {
                add(
                    "noTraffic", .note,
                    "Widget type '\(type)' was not judged: no app version had traffic in the window and no "
                        + "manifest describes one, so whether apps render it is unknown.",
                    path: occurrences[type]![0].widget.path, type: type, app: nil, key: nil)
            }
            return found
        }
        for app in manifestsWithoutTraffic.keys.sorted() {
            let versions = manifestsWithoutTraffic[app]!
            let ordered = versions.keys.sorted(by: VersionOrder.less)
            for type in occurrences.keys.sorted() {
                let places = occurrences[type]!
                let missing = ordered.filter { !versions[$0]!.renders(type) }
                if !missing.isEmpty {
                    add(
                        "unknownType", .error,
                        "Widget type '\(type)' is not in the manifests of \(app) \(missing.joined(separator: ", ")) "
                            + "(no traffic in the window to weigh them).",
                        path: places[0].widget.path, type: type, app: app, key: nil)
                }
                var lacking: [String: (path: String, versions: [String])] = [:]
                for version in ordered {
                    guard let shape = versions[version]!.types[type] else { continue }
                    for occurrence in places {
                        for gap in ShapeCheck.missing(
                            shape.required, in: occurrence.content, at: occurrence.contentPath)
                        {
                            var entry = lacking[gap.key] ?? (gap.path, [])
                            if !entry.versions.contains(version) { entry.versions.append(version) }
                            lacking[gap.key] = entry
                        }
                    }
                }
                for key in lacking.keys.sorted() {
                    let entry = lacking[key]!
                    add(
                        "malformedPayload", .error,
                        "Widget type '\(type)' lacks '\(key)', which the manifests of \(app) "
                            + "\(entry.versions.joined(separator: ", ")) require (no traffic in the window).",
                        path: entry.path, type: type, app: app, key: key)
                }
            }
        }
        return found
    }
}
