/// Who sent a batch: the app, its version and build, and the install.
public struct ClientInfo: Hashable, Sendable, Codable {
    /// The app's bundle identifier; required.
    public var appID: String
    /// The app's marketing version, for example `5.2.1`; required. See ``AppVersion`` for ordering.
    public var appVersion: String
    /// The build number.
    public var build: String?
    /// The platform, for example `ios`; required.
    public var platform: String
    /// The operating system version.
    public var osVersion: String?
    /// The Flowmeter reporter SDK version.
    public var sdkVersion: String?
    /// The install's random identifier; the collector only ever forwards a salted hash of it.
    public var installID: String?
    /// Debug or release; absent and unrecognised values mean `.release`.
    public var buildConfiguration: BuildConfiguration
    /// What the app does with unknown types; unrecognised values decode as nil.
    public var unknownPolicy: UnknownPolicy?
    /// What the app can render, when it says.
    public var capabilities: Capabilities?

    /// Creates client information.
    public init(
        appID: String, appVersion: String, build: String? = nil, platform: String, osVersion: String? = nil,
        sdkVersion: String? = nil, installID: String? = nil, buildConfiguration: BuildConfiguration = .release,
        unknownPolicy: UnknownPolicy? = nil, capabilities: Capabilities? = nil
    ) {
        self.appID = appID
        self.appVersion = appVersion
        self.build = build
        self.platform = platform
        self.osVersion = osVersion
        self.sdkVersion = sdkVersion
        self.installID = installID
        self.buildConfiguration = buildConfiguration
        self.unknownPolicy = unknownPolicy
        self.capabilities = capabilities
    }

    /// The app version as an orderable value.
    public var version: AppVersion { AppVersion(appVersion) }
}

extension ClientInfo {
    enum CodingKeys: String, CodingKey {
        case appID, appVersion, build, platform, osVersion, sdkVersion, installID, buildConfiguration, unknownPolicy
        case capabilities
    }

    /// Decodes client information; a missing required key or a wrong type is an error (it fails the batch).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.appID = try container.requiredIdentifier(.appID)
        self.appVersion = try container.requiredIdentifier(.appVersion)
        self.build = try container.identifier(.build)
        self.platform = try container.requiredIdentifier(.platform)
        self.osVersion = try container.identifier(.osVersion)
        self.sdkVersion = try container.identifier(.sdkVersion)
        self.installID = try container.identifier(.installID)
        self.buildConfiguration =
            try container.identifier(.buildConfiguration).map(BuildConfiguration.init(wireValue:))
            ?? .release
        self.unknownPolicy = try container.identifier(.unknownPolicy).flatMap(UnknownPolicy.init(rawValue:))
        if try container.object(.capabilities, keyedBy: Capabilities.CodingKeys.self, required: false) != nil {
            self.capabilities = try container.decode(Capabilities.self, forKey: .capabilities)
        } else {
            self.capabilities = nil
        }
    }
}
