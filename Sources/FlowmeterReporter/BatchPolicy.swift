public import Foundation

/// When the open batch is sealed, and the pre-aggregation caps; the defaults are those of the SDK in
/// docs/api.md#client-sdk.
public struct BatchPolicy: Sendable, Hashable {
    /// Seal the open batch once it is this old (seconds).
    public var maxAge: TimeInterval = 10
    /// Seal it once it holds this many events, counted after pre-aggregation (what the upload carries).
    public var maxEvents = 500
    /// Seal it before its file would grow past this many bytes.
    public var maxBytes = 512 * 1024
    /// Merge identical events without an `id` into one with `count` summed.
    public var aggregatesIdenticalEvents = true
    /// At most this many distinct pre-aggregation keys per batch; a new key past it is cut (`cap_exceeded`). With
    /// the default `maxEvents` (500) a batch is sealed first, so this binds only where `maxEvents` is raised.
    public var maxDistinctKeys = 1_000
    /// At most this many new events (distinct entries) between two `recordDecodes` calls (one page decode); further
    /// new ones are cut (`cap_exceeded`), while an event identical to one in the batch still merges into its count.
    public var maxEventsPerDecode = 100

    /// Creates the default policy.
    public init() {}
}
