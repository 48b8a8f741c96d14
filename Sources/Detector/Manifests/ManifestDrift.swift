public import FlowmeterModels

/// A manifest out of date: an app version's traffic contradicts the manifest its build uploaded
/// (`flowmeter manifests check`, the weekly report).
///
/// Either the version reports `unknownType` for a type its manifest lists (the build does not register it after
/// all), or it reports `malformedPayload` for a missing key its manifest calls optional, or does not list (the
/// content requires the key after all). Judged per platform: the series' platform against that platform's manifests
/// of the version.
public struct ManifestDrift: Hashable, Sendable, JSONRepresentable {
    /// How the traffic contradicts the manifest.
    public enum Reason: String, Hashable, Sendable {
        /// `unknownType` for a type the manifest lists.
        case listedTypeUnknown
        /// `malformedPayload` naming a missing key the manifest calls optional.
        case optionalKeyRequired
        /// `malformedPayload` naming a missing key the manifest does not list for the type at all.
        case unlistedKeyRequired
    }

    /// The app.
    public var appID: String
    /// The app version whose manifest is out of date.
    public var appVersion: String
    /// The platform whose traffic contradicts it.
    public var platform: String
    /// The widget type.
    public var widgetType: String
    /// `unknownType` or `malformedPayload`.
    public var kind: DiagnosticKind
    /// For `malformedPayload`, the missing key as the app named it; nil for `unknownType`.
    public var key: String?
    /// How the traffic contradicts the manifest.
    public var reason: Reason
    /// Release events of the kind for the type from this version and platform in the window.
    public var events: Int64
    /// The builds whose manifests say otherwise.
    public var builds: [String]
    /// When the version last reported it in the window.
    public var lastSeen: Timestamp

    /// Creates a finding.
    public init(
        appID: String, appVersion: String, platform: String, widgetType: String, kind: DiagnosticKind, key: String?,
        reason: Reason, events: Int64, builds: [String], lastSeen: Timestamp
    ) {
        self.appID = appID
        self.appVersion = appVersion
        self.platform = platform
        self.widgetType = widgetType
        self.kind = kind
        self.key = key
        self.reason = reason
        self.events = events
        self.builds = builds
        self.lastSeen = lastSeen
    }

    /// `{"appID", "appVersion", "platform", "widgetType", "kind", "key", "reason", "events", "builds", "lastSeen"}`.
    public var jsonValue: JSONValue {
        .object([
            ("appID", .string(appID)), ("appVersion", .string(appVersion)), ("platform", .string(platform)),
            ("widgetType", .string(widgetType)), ("kind", .string(kind.rawValue)),
            ("key", key.map { .string($0) } ?? .null), ("reason", .string(reason.rawValue)),
            ("events", .integer(events)), ("builds", .array(builds.map { .string($0) })),
            ("lastSeen", .string(lastSeen.rfc3339String)),
        ])
    }
}
