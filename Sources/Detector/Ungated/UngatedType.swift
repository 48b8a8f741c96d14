public import FlowmeterModels

/// A widget type that release builds of some app version cannot render, as an element of docs/api.md#query-output's
/// `ungated`.
public struct UngatedType: Hashable, Sendable, JSONRepresentable {
    /// The app.
    public var appID: String
    /// The widget type the backend sends.
    public var widgetType: String
    /// Release-build `unknownType` events for the type in the window, over all versions.
    public var events: Int64
    /// Distinct installs that reported it (the union of every version's sketch).
    public var installs: Int64
    /// Every version that reported it, ordered by app version (numerically, `5.10` after `5.9`).
    public var affectedVersions: [AffectedVersion]
    /// Versions that render it, ordered by app version.
    public var renderingVersions: [String]
    /// The lowest version a backend gate could require so that no affected version gets the type; nil when no
    /// version renders it, or when every rendering version is older than some affected one.
    public var suggestedMinAppVersion: String?
    /// The earliest `occurredAt` of the type's events in the window.
    public var firstSeen: Timestamp
    /// The deploy the type is attributed to.
    public var suspectDeploy: SuspectDeploy?
    /// The known type this one is probably a misspelling of, when no version renders it.
    public var likelyTypoOf: String?
    /// New, ongoing, or regressed (back after a quiet stretch of `--regression-quiet`).
    public var status: UngatedStatus
    /// For a regressed type, the end of the last hour it was seen before the quiet stretch; not part of the
    /// contract JSON.
    public var lastSeenBefore: Timestamp?
    /// The page ids its sampled events name, by name; not part of the contract JSON (owner rules match them).
    public var pages: [String]

    /// Creates a finding.
    public init(
        appID: String, widgetType: String, events: Int64, installs: Int64, affectedVersions: [AffectedVersion],
        renderingVersions: [String], suggestedMinAppVersion: String?, firstSeen: Timestamp,
        suspectDeploy: SuspectDeploy?, likelyTypoOf: String?, status: UngatedStatus = .new,
        lastSeenBefore: Timestamp? = nil, pages: [String] = []
    ) {
        self.appID = appID
        self.widgetType = widgetType
        self.events = events
        self.installs = installs
        self.affectedVersions = affectedVersions
        self.renderingVersions = renderingVersions
        self.suggestedMinAppVersion = suggestedMinAppVersion
        self.firstSeen = firstSeen
        self.suspectDeploy = suspectDeploy
        self.likelyTypoOf = likelyTypoOf
        self.status = status
        self.lastSeenBefore = lastSeenBefore
        self.pages = pages
    }

    /// The contract's object, keys in its order (`status` last); `suggestedGate`, `suspectDeploy` and
    /// `likelyTypoOf` are `null` when absent.
    public var jsonValue: JSONValue {
        .object([
            ("appID", .string(appID)),
            ("widgetType", .string(widgetType)),
            ("events", .integer(events)),
            ("installs", .integer(installs)),
            ("affectedVersions", .array(affectedVersions.map(\.jsonValue))),
            ("renderingVersions", .array(renderingVersions.map { .string($0) })),
            ("suggestedGate", suggestedMinAppVersion.map { .object([("minAppVersion", .string($0))]) } ?? .null),
            ("firstSeen", .string(firstSeen.rfc3339String)),
            ("suspectDeploy", suspectDeploy?.jsonValue ?? .null),
            ("likelyTypoOf", likelyTypoOf.map { .string($0) } ?? .null),
            ("status", .string(status.rawValue)),
        ])
    }
}
