/// One normalized event as it is published to `flowmeter.events.v1`: the event's fields plus where it came from.
///
/// Never carries the raw install id, only `installHash` (salted by the collector). `Codable` is the reference
/// encoding; the ingest path writes the same JSON with ``EventRecordWriter``.
public struct EventRecord: Hashable, Sendable, Codable {
    /// The event's own id, or `<batch id>/<index>` when it has none.
    public var id: String
    /// What went wrong.
    public var kind: DiagnosticKind
    /// The widget type involved.
    public var widgetType: String?
    /// Where in the page the decoder was.
    public var codingPath: String?
    /// The app's description.
    public var message: String?
    /// The page being decoded.
    public var pageID: String?
    /// The surface being decoded.
    public var surface: String?
    /// The backend release that served the page.
    public var backendRelease: String?
    /// How many times the app saw it.
    public var count: Int
    /// When the app saw it.
    public var occurredAt: Timestamp
    /// The reporting app.
    public var appID: String
    /// The reporting app's version.
    public var appVersion: String
    /// The reporting app's platform.
    public var platform: String
    /// Debug or release.
    public var buildConfiguration: BuildConfiguration
    /// The salted hash of the install id, when the app sent one.
    public var installHash: String?
    /// When the collector received the batch.
    public var receivedAt: Timestamp
    /// The collector instance that received it.
    public var collector: String

    /// Creates a record field by field.
    public init(
        id: String, kind: DiagnosticKind, widgetType: String? = nil, codingPath: String? = nil, message: String? = nil,
        pageID: String? = nil, surface: String? = nil, backendRelease: String? = nil, count: Int = 1,
        occurredAt: Timestamp, appID: String, appVersion: String, platform: String,
        buildConfiguration: BuildConfiguration = .release, installHash: String? = nil, receivedAt: Timestamp,
        collector: String
    ) {
        self.id = id
        self.kind = kind
        self.widgetType = widgetType
        self.codingPath = codingPath
        self.message = message
        self.pageID = pageID
        self.surface = surface
        self.backendRelease = backendRelease
        self.count = count
        self.occurredAt = occurredAt
        self.appID = appID
        self.appVersion = appVersion
        self.platform = platform
        self.buildConfiguration = buildConfiguration
        self.installHash = installHash
        self.receivedAt = receivedAt
        self.collector = collector
    }

    /// Normalizes event `index` of `client`'s batch `batchID`.
    public init(
        event: DiagnosticEvent, index: Int, batchID: String, client: ClientInfo, installHash: String?,
        receivedAt: Timestamp, collector: String
    ) {
        self.init(
            id: event.id ?? "\(batchID)/\(index)", kind: event.kind, widgetType: event.widgetType,
            codingPath: event.codingPath, message: event.message, pageID: event.pageID, surface: event.surface,
            backendRelease: event.backendRelease, count: event.count, occurredAt: event.occurredAt,
            appID: client.appID, appVersion: client.appVersion, platform: client.platform,
            buildConfiguration: client.buildConfiguration, installHash: installHash, receivedAt: receivedAt,
            collector: collector)
    }
}
