import Detector
import FlowmeterModels
import Rollups

/// Each widget type the window mentions, per app, with the versions that register it, render it, or reported it as
/// unknown, and where each version's answer comes from (its manifest, its capabilities, or its traffic): what
/// `flowmeter types` prints.
struct TypesReport: Sendable, JSONRepresentable {
    /// One (app, widget type).
    struct Row: Sendable, Hashable {
        var appID: String
        var widgetType: String
        var isKnown: Bool
        var registeringVersions: [String]
        var renderingVersions: [String]
        var unknownIn: [String]
        /// Release events per kind in the window, by kind name.
        var events: [String: Int64]
        /// The app's live versions by where the answer about them comes from, each list ordered by app version.
        var sources: [AppTraffic.Source: [String]]
    }

    var window: QueryWindow
    var rows: [Row]

    /// Builds the rows: by app, then type name.
    static func make(window: QueryWindow, apps: [String: AppTraffic]) -> TypesReport {
        var rows: [Row] = []
        for appID in apps.keys.sorted() {
            let app = apps[appID]!
            for type in app.mentionedTypes.sorted() {
                var events: [String: Int64] = [:]
                for (kind, count) in app.eventsByKind[type] ?? [:] { events[kind.rawValue] = count }
                let sources = Dictionary(grouping: app.orderedVersions, by: { app.source(of: $0) })
                rows.append(
                    Row(
                        appID: appID, widgetType: type, isKnown: app.isKnown(type),
                        registeringVersions: app.registeringVersions(of: type),
                        renderingVersions: app.renderingVersions(of: type),
                        unknownIn: (app.unknownReporters[type] ?? []).sorted(by: VersionOrder.less),
                        events: events, sources: sources))
            }
        }
        return TypesReport(window: window, rows: rows)
    }

    /// `{"from", "to", "types": [{"appID", "widgetType", "known", "registeringVersions", "renderingVersions",
    /// "unknownIn", "events": {kind: count}, "sources": {"manifest", "capabilities", "traffic"}}]}`; `events` keys
    /// sorted; each source lists the live versions answered from it.
    var jsonValue: JSONValue {
        func strings(_ values: [String]) -> JSONValue { .array(values.map { .string($0) }) }
        return .object([
            ("from", .string(window.from.rfc3339String)), ("to", .string(window.to.rfc3339String)),
            (
                "types",
                .array(
                    rows.map { row in
                        .object([
                            ("appID", .string(row.appID)), ("widgetType", .string(row.widgetType)),
                            ("known", .bool(row.isKnown)),
                            ("registeringVersions", strings(row.registeringVersions)),
                            ("renderingVersions", strings(row.renderingVersions)),
                            ("unknownIn", strings(row.unknownIn)),
                            (
                                "events",
                                .object(row.events.sorted { $0.key < $1.key }.map { ($0.key, .integer($0.value)) })
                            ),
                            (
                                "sources",
                                .object(
                                    [AppTraffic.Source.manifest, .capabilities, .traffic].map {
                                        ($0.rawValue, strings(row.sources[$0] ?? []))
                                    })
                            ),
                        ])
                    })
            ),
        ])
    }
}
