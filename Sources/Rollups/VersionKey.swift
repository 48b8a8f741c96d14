public import FlowmeterModels

/// One app build: the key of a version rollup.
///
/// Ordered field by field (appID, platform, appVersion, buildConfiguration) by UTF-8 bytes.
public struct VersionKey: Hashable, Comparable, Sendable {
    /// The app's bundle identifier.
    public var appID: String
    /// The platform, for example `ios`.
    public var platform: String
    /// The app's version string as sent.
    public var appVersion: String
    /// Debug or release.
    public var buildConfiguration: BuildConfiguration

    /// Creates a key.
    public init(appID: String, platform: String, appVersion: String, buildConfiguration: BuildConfiguration) {
        self.appID = appID
        self.platform = platform
        self.appVersion = appVersion
        self.buildConfiguration = buildConfiguration
    }

    /// The key of the app build that sent a batch.
    public init(client: ClientInfo) {
        self.init(
            appID: client.appID, platform: client.platform, appVersion: client.appVersion,
            buildConfiguration: client.buildConfiguration)
    }

    public static func < (lhs: VersionKey, rhs: VersionKey) -> Bool {
        if lhs.appID != rhs.appID { return utf8Less(lhs.appID, rhs.appID) }
        if lhs.platform != rhs.platform { return utf8Less(lhs.platform, rhs.platform) }
        if lhs.appVersion != rhs.appVersion { return utf8Less(lhs.appVersion, rhs.appVersion) }
        return utf8Less(lhs.buildConfiguration.rawValue, rhs.buildConfiguration.rawValue)
    }
}
