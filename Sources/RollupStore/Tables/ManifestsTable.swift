import FlowmeterModels
import Rollups

/// `manifests`: one capability manifest per app id, platform, app version and build (docs/api.md#capability-manifests), as JSON, with the
/// upload time in two columns so a later upload replaces an earlier one and never the reverse.
enum ManifestsTable {
    static let name = "manifests"
    static let keyColumns: SQLColumns = ["app_id", "platform", "app_version", "build"]
    static let valueColumns: SQLColumns = ["uploaded_s", "uploaded_ns", "manifest"]
    static var columns: SQLColumns { keyColumns + valueColumns }

    /// The row of `manifest`, in ``columns`` order; a manifest without an upload time counts as uploaded at the epoch.
    static func row(of manifest: CapabilityManifest) -> [SQLValue] {
        let uploaded = manifest.uploadedAt ?? Timestamp(secondsSinceEpoch: 0)
        return [
            .text(manifest.appID), .text(manifest.platform), .text(manifest.appVersion), .text(manifest.build ?? ""),
            .integer(uploaded.secondsSinceEpoch), .integer(Int64(uploaded.nanoseconds)), .blob(manifest.jsonBytes()),
        ]
    }

    /// The manifest a row holds, read in ``columns`` order; throws `invalidData` when it does not decode.
    static func decode(_ row: any SQLRow) throws -> CapabilityManifest {
        let bytes = try row.blob(6)
        do {
            // Stored manifests are read as they are; the identifier rule was the writer's to apply.
            return try CapabilityManifest(jsonBytes: bytes, checkingIdentifiers: false)
        } catch {
            throw RollupStoreError(.invalidData, "Stored manifest does not decode: \(error)")
        }
    }

    /// Stores `manifest` in its own transaction, replacing the same build's manifest unless that one was uploaded
    /// later (a replayed topic message never undoes a newer upload).
    static func record(_ manifest: CapabilityManifest, on connection: TableConnection) throws {
        try connection.database.writeTransaction {
            try connection.database.update(
                """
                INSERT INTO \(name) (\(columns.list())) VALUES (\(columns.placeholders()))
                ON CONFLICT (\(keyColumns.list())) DO UPDATE SET \(valueColumns.fromExcluded)
                WHERE excluded.uploaded_s > \(name).uploaded_s
                    OR (excluded.uploaded_s = \(name).uploaded_s AND excluded.uploaded_ns >= \(name).uploaded_ns)
                """, row(of: manifest))
        }
    }

    /// The manifests of `appID` (or every app), in `CapabilityManifest.storeOrder` (app id, version, platform, build);
    /// rows that do not decode are skipped and reported.
    static func manifests(appID: String?, on connection: TableConnection) throws -> [CapabilityManifest] {
        var manifests: [CapabilityManifest] = []
        var skipped = SkippedRows(name)
        let filter = appID == nil ? "" : " WHERE app_id = $1"
        try connection.database.query(
            "SELECT \(columns.list()) FROM \(name)\(filter)", appID.map { [.text($0)] } ?? []
        ) { row in
            try connection.readRow(&skipped) { manifests.append(try decode(row)) }
        }
        connection.report(skipped)
        return manifests.sorted(by: CapabilityManifest.storeOrder)
    }
}
