/// How `serve` keeps the compatibility answers (`GET /v1/compatibility`, docs/compatibility.md).
public struct CompatibilityConfiguration: Sendable {
    /// Time between refreshes of the answers from the store (the first at start); default 30 s. An uploaded
    /// manifest or a new version's traffic shows in the answers within this interval (plus the sink's lag).
    public var refreshInterval: Duration = .seconds(30)
    /// How far back capabilities and traffic count: a version seen in it is known; default 72 h.
    public var trafficWindow: Duration = .seconds(72 * 3600)
    /// How far back `unknownInTraffic` looks; 24 h (docs/api.md#reading).
    public var unknownWindow: Duration = .seconds(24 * 3600)
    /// The most app versions kept in memory; past it, versions with manifests first, then the most recently seen.
    /// Default 100 000.
    public var maxVersions = 100_000

    /// The defaults.
    public init() {}
}
