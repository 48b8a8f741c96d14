/// The most a manifest may hold; an upload over any of them is refused whole (413), never truncated, since a cut
/// list would make the build look as if it lacked types it has.
///
/// The defaults hold a large app with room to spare: Flow-UI apps register tens of types, each with a handful of keys.
public struct ManifestLimits: Hashable, Sendable {
    /// The largest JSON document, in bytes; default 1 MiB (the collector's body limit).
    public var maxBytes = 1 << 20
    /// The most widget types; default 2,000.
    public var maxTypes = 2_000
    /// The most keys (required and optional together) of one type; default 500.
    public var maxKeysPerType = 500
    /// The most keys over all types; default 50,000.
    public var maxKeys = 50_000
    /// The most arrangements; default 100.
    public var maxArrangements = 100
    /// The longest type or arrangement name, in characters; default 128 (the ingest limit of `widgetType`).
    public var maxNameLength = FieldLimits.widgetType
    /// The longest app id, version, platform, build or key path, in characters; default 256.
    public var maxFieldLength = FieldLimits.other
    /// The most segments of a key path (`a.b[].c` has 3); default 8.
    public var maxKeyDepth = 8

    /// The defaults.
    public init() {}
}
