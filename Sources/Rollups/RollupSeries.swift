public import FlowmeterModels

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a series rollup counts: one app build's events of one kind and widget type.
///
/// Ordered field by field (appID, platform, appVersion, buildConfiguration, kind, widgetType) by UTF-8 bytes, the
/// order SQL's binary collation gives, so every store returns rows in the same order.
public struct RollupSeries: Hashable, Comparable, Sendable {
    /// The reporting app's bundle identifier.
    public var appID: String
    /// The reporting app's platform, for example `ios`.
    public var platform: String
    /// The reporting app's version string as sent.
    public var appVersion: String
    /// Debug or release.
    public var buildConfiguration: BuildConfiguration
    /// The diagnostic kind.
    public var kind: DiagnosticKind
    /// The widget type, `""` when the event carries none.
    public var widgetType: String

    /// Creates a series.
    public init(
        appID: String, platform: String, appVersion: String, buildConfiguration: BuildConfiguration,
        kind: DiagnosticKind, widgetType: String
    ) {
        self.appID = appID
        self.platform = platform
        self.appVersion = appVersion
        self.buildConfiguration = buildConfiguration
        self.kind = kind
        self.widgetType = widgetType
    }

    /// Creates the series of `kind` and `widgetType` within the app build `version`.
    public init(version: VersionKey, kind: DiagnosticKind, widgetType: String?) {
        self.init(
            appID: version.appID, platform: version.platform, appVersion: version.appVersion,
            buildConfiguration: version.buildConfiguration, kind: kind, widgetType: widgetType ?? "")
    }

    /// The app build this series belongs to.
    public var versionKey: VersionKey {
        VersionKey(
            appID: appID, platform: platform, appVersion: appVersion, buildConfiguration: buildConfiguration)
    }

    public static func < (lhs: RollupSeries, rhs: RollupSeries) -> Bool {
        if lhs.versionKey != rhs.versionKey { return lhs.versionKey < rhs.versionKey }
        if lhs.kind != rhs.kind { return utf8Less(lhs.kind.rawValue, rhs.kind.rawValue) }
        return utf8Less(lhs.widgetType, rhs.widgetType)
    }
}

/// Whether `lhs` sorts before `rhs` by UTF-8 bytes (SQL binary collation), not by Swift's Unicode ordering.
///
/// Compared with `memcmp` over the strings' contiguous UTF-8 (every native string has it): the generic
/// `lexicographicallyPrecedes` over two `UTF8View`s walked them a byte at a time through their indices, about ten
/// times the instructions, and the rollups compare samples' pages and messages per event.
func utf8Less(_ lhs: String, _ rhs: String) -> Bool {
    let order = lhs.utf8.withContiguousStorageIfAvailable { left in
        rhs.utf8.withContiguousStorageIfAvailable { right -> Bool in
            let common = min(left.count, right.count)
            if common > 0 {
                let difference = memcmp(left.baseAddress!, right.baseAddress!, common)
                if difference != 0 { return difference < 0 }
            }
            return left.count < right.count
        }
    }
    if let order, let order { return order }
    return lhs.utf8.lexicographicallyPrecedes(rhs.utf8)
}
