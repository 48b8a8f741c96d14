public import FlowmeterModels

/// Which series rollups a read returns: a half-open time range and optional filters (nil means any).
///
/// A rollup matches when its window start lies in `from..<to` and it passes every filter that is set.
public struct SeriesQuery: Hashable, Sendable {
    /// The first instant included.
    public var from: Timestamp
    /// The first instant excluded.
    public var to: Timestamp
    /// Only this app.
    public var appID: String?
    /// Only these kinds.
    public var kinds: Set<DiagnosticKind>?
    /// Only these widget types (`""` is the series of events without one).
    public var widgetTypes: Set<String>?
    /// Only this build configuration.
    public var buildConfiguration: BuildConfiguration?
    /// Only this app version (exact string).
    public var appVersion: String?

    /// Creates a query.
    public init(
        from: Timestamp, to: Timestamp, appID: String? = nil, kinds: Set<DiagnosticKind>? = nil,
        widgetTypes: Set<String>? = nil, buildConfiguration: BuildConfiguration? = nil, appVersion: String? = nil
    ) {
        self.from = from
        self.to = to
        self.appID = appID
        self.kinds = kinds
        self.widgetTypes = widgetTypes
        self.buildConfiguration = buildConfiguration
        self.appVersion = appVersion
    }

    /// Whether a window start lies in `from..<to`.
    public func contains(windowStart: Int64) -> Bool {
        let start = Timestamp(secondsSinceEpoch: windowStart)
        return from <= start && start < to
    }

    /// Whether `series` in `window` passes the range and every filter.
    public func matches(_ series: RollupSeries, window: MinuteWindow) -> Bool {
        contains(windowStart: window.start) && (appID == nil || series.appID == appID)
            && (kinds?.contains(series.kind) ?? true) && (widgetTypes?.contains(series.widgetType) ?? true)
            && (buildConfiguration == nil || series.buildConfiguration == buildConfiguration)
            && (appVersion == nil || series.appVersion == appVersion)
    }
}
