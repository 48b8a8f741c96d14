public import FlowmeterModels

extension CapabilityManifest {
    /// The order every store lists manifests in: by app id, app version (numerically, docs/api.md#ingest), the version's
    /// spelling, platform, then build; strings by UTF-8 bytes.
    public static func storeOrder(_ lhs: CapabilityManifest, _ rhs: CapabilityManifest) -> Bool {
        if lhs.appID != rhs.appID { return utf8Less(lhs.appID, rhs.appID) }
        let left = AppVersion(lhs.appVersion)
        let right = AppVersion(rhs.appVersion)
        if left < right || right < left { return left < right }
        if lhs.appVersion != rhs.appVersion { return utf8Less(lhs.appVersion, rhs.appVersion) }
        if lhs.platform != rhs.platform { return utf8Less(lhs.platform, rhs.platform) }
        return utf8Less(lhs.build ?? "", rhs.build ?? "")
    }
}
