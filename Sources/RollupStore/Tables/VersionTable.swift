import FlowmeterModels
import Rollups

/// `versions`: one row per app build (appID, platform, appVersion, buildConfiguration), the id its minute and hour
/// rows point to.
enum VersionTable: KeyTable {
    static let name = "versions"
    static let noun = "Version"
    static let columns: SQLColumns = ["app_id", "platform", "app_version", "build_configuration"]

    static func values(of key: VersionKey) -> [SQLValue] {
        [.text(key.appID), .text(key.platform), .text(key.appVersion), .text(key.buildConfiguration.rawValue)]
    }

    static func decode(_ row: any SQLRow, offset: Int32) throws -> VersionKey {
        let configuration = try row.text(offset + 3)
        guard let buildConfiguration = BuildConfiguration(rawValue: configuration) else {
            throw RollupStoreError(
                .invalidData, "Stored version has build configuration \(String(reflecting: configuration))")
        }
        return VersionKey(
            appID: try row.text(offset), platform: try row.text(offset + 1), appVersion: try row.text(offset + 2),
            buildConfiguration: buildConfiguration)
    }
}
