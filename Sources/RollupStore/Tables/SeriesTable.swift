import FlowmeterModels
import Rollups

/// `series`: one row per (appID, platform, appVersion, buildConfiguration, kind, widgetType), the id its minute and
/// hour rows point to.
enum SeriesTable: KeyTable {
    static let name = "series"
    static let noun = "Series"
    static let columns: SQLColumns = [
        "app_id", "platform", "app_version", "build_configuration", "kind", "widget_type",
    ]

    static func values(of series: RollupSeries) -> [SQLValue] {
        [
            .text(series.appID), .text(series.platform), .text(series.appVersion),
            .text(series.buildConfiguration.rawValue), .text(series.kind.rawValue), .text(series.widgetType),
        ]
    }

    static func decode(_ row: any SQLRow, offset: Int32) throws -> RollupSeries {
        let configuration = try row.text(offset + 3)
        let kind = try row.text(offset + 4)
        guard let buildConfiguration = BuildConfiguration(rawValue: configuration),
            let diagnosticKind = DiagnosticKind(rawValue: kind)
        else {
            throw RollupStoreError(
                .invalidData,
                "Stored series has build configuration \(String(reflecting: configuration)), kind \(String(reflecting: kind))"
            )
        }
        // Other strings are shown as stored (a store written some other way may hold anything): every writer
        // escapes what an app could have sent.
        return RollupSeries(
            appID: try row.text(offset), platform: try row.text(offset + 1), appVersion: try row.text(offset + 2),
            buildConfiguration: buildConfiguration, kind: diagnosticKind, widgetType: try row.text(offset + 5))
    }
}
