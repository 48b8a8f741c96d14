import Detector
import FlowmeterModels
import Rollups

/// Per app version: installs, batches and the decode-clean rate (clean batches ÷ batches), what `flowmeter
/// versions` prints.
struct VersionsReport: Sendable, JSONRepresentable {
    /// One app version's totals in the window, platforms merged.
    struct Row: Sendable, Hashable {
        var appID: String
        var appVersion: String
        var platforms: [String]
        var installs: Int64
        var batches: Int64
        var cleanBatches: Int64
        var decodes: Int64
        var sendsCapabilities: Bool
        var registeredTypes: Int

        /// Clean batches ÷ batches to 4 places; nil without batches.
        var decodeCleanRate: Double? {
            batches == 0 ? nil : (Double(cleanBatches) / Double(batches) * 10_000).rounded() / 10_000
        }
    }

    var window: QueryWindow
    var rows: [Row]

    /// Builds the rows from the window's release traffic: by app, then version oldest first.
    static func make(window: QueryWindow, apps: [String: AppTraffic]) -> VersionsReport {
        var rows: [Row] = []
        for appID in apps.keys.sorted() {
            let app = apps[appID]!
            for version in app.orderedVersions {
                let traffic = app.versions[version]!
                rows.append(
                    Row(
                        appID: appID, appVersion: version, platforms: traffic.platforms.sorted(),
                        installs: traffic.installs.count, batches: traffic.batches,
                        cleanBatches: traffic.cleanBatches, decodes: traffic.decodes,
                        sendsCapabilities: traffic.sendsCapabilities, registeredTypes: traffic.registeredTypes.count))
            }
        }
        return VersionsReport(window: window, rows: rows)
    }

    /// `{"from", "to", "versions": [{"appID", "appVersion", "platforms", "installs", "batches", "cleanBatches",
    /// "decodeCleanRate", "decodes", "sendsCapabilities", "registeredTypes"}]}`.
    var jsonValue: JSONValue {
        .object([
            ("from", .string(window.from.rfc3339String)), ("to", .string(window.to.rfc3339String)),
            (
                "versions",
                .array(
                    rows.map { row in
                        .object([
                            ("appID", .string(row.appID)), ("appVersion", .string(row.appVersion)),
                            ("platforms", .array(row.platforms.map { .string($0) })),
                            ("installs", .integer(row.installs)), ("batches", .integer(row.batches)),
                            ("cleanBatches", .integer(row.cleanBatches)),
                            ("decodeCleanRate", row.decodeCleanRate.map { .number($0) } ?? .null),
                            ("decodes", .integer(row.decodes)), ("sendsCapabilities", .bool(row.sendsCapabilities)),
                            ("registeredTypes", .integer(Int64(row.registeredTypes))),
                        ])
                    })
            ),
        ])
    }
}
