import Detector
import FlowmeterModels
import Rollups

/// The busiest diagnostics in a window by (app, kind, widget type, app version), each with its count in the previous
/// window of the same length: what `flowmeter top` prints.
struct TopReport: Sendable, JSONRepresentable {
    /// One group's counts.
    struct Row: Sendable, Hashable {
        var appID: String
        var kind: DiagnosticKind
        var widgetType: String
        var appVersion: String
        var events: Int64
        var installs: Int64
        var previousEvents: Int64

        /// (events − previous) ÷ previous to 4 places; nil when the previous window had none.
        var change: Double? {
            previousEvents == 0
                ? nil : (Double(events - previousEvents) / Double(previousEvents) * 10_000).rounded() / 10_000
        }
    }

    var window: QueryWindow
    var rows: [Row]
    /// Groups that had events in the window before the cut to `limit`.
    var totalGroups: Int

    /// Reads both windows and ranks the groups: most events first, then app, kind, type and version.
    static func load(
        reader: some RollupReader, window: QueryWindow, appID: String?, kinds: Set<DiagnosticKind>?,
        includeDebug: Bool, limit: Int
    ) throws -> TopReport {
        typealias Key = [String]
        func totals(_ range: QueryWindow) throws -> [Key: (events: Int64, installs: HyperLogLog)] {
            let query = SeriesQuery(
                from: range.from, to: range.to, appID: appID, kinds: kinds,
                buildConfiguration: includeDebug ? nil : .release)
            var totals: [Key: (events: Int64, installs: HyperLogLog)] = [:]
            for rollup in try reader.seriesRollups(query) {
                let series = rollup.series
                let key = [series.appID, series.kind.rawValue, series.widgetType, series.appVersion]
                totals[key, default: (0, HyperLogLog())].events += rollup.events
                totals[key]?.installs.merge(rollup.installs)
            }
            return totals
        }
        let current = try totals(window)
        let previous = try totals(window.previous)
        var rows = current.map { key, value in
            Row(
                appID: key[0], kind: DiagnosticKind(rawValue: key[1])!, widgetType: key[2], appVersion: key[3],
                events: value.events, installs: value.installs.count, previousEvents: previous[key]?.events ?? 0)
        }
        rows.sort {
            if $0.events != $1.events { return $0.events > $1.events }
            if $0.appID != $1.appID { return $0.appID < $1.appID }
            if $0.kind != $1.kind { return $0.kind.rawValue < $1.kind.rawValue }
            if $0.widgetType != $1.widgetType { return $0.widgetType < $1.widgetType }
            return VersionOrder.less($0.appVersion, $1.appVersion)
        }
        let total = rows.count
        if limit > 0 && rows.count > limit { rows.removeLast(rows.count - limit) }
        return TopReport(window: window, rows: rows, totalGroups: total)
    }

    /// `{"from", "to", "previousFrom", "previousTo", "top": [{"appID", "kind", "widgetType", "appVersion",
    /// "events", "installs", "previousEvents", "change"}]}`; `widgetType` null for events without one.
    var jsonValue: JSONValue {
        .object([
            ("from", .string(window.from.rfc3339String)), ("to", .string(window.to.rfc3339String)),
            ("previousFrom", .string(window.previous.from.rfc3339String)),
            ("previousTo", .string(window.previous.to.rfc3339String)),
            (
                "top",
                .array(
                    rows.map { row in
                        .object([
                            ("appID", .string(row.appID)), ("kind", .string(row.kind.rawValue)),
                            ("widgetType", row.widgetType.isEmpty ? .null : .string(row.widgetType)),
                            ("appVersion", .string(row.appVersion)), ("events", .integer(row.events)),
                            ("installs", .integer(row.installs)), ("previousEvents", .integer(row.previousEvents)),
                            ("change", row.change.map { .number($0) } ?? .null),
                        ])
                    })
            ),
        ])
    }
}
