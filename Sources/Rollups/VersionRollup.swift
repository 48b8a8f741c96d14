/// One app build's traffic in one minute (of receipt): batches, clean batches, decodes, installs, capabilities.
///
/// ``merge(_:)`` is associative and commutative exactly: counts add, installs and registered types union, the
/// schema version takes the maximum.
public struct VersionRollup: Sendable, Codable, Equatable {
    /// The app build.
    public var key: VersionKey
    /// The minute the batches were received.
    public var window: MinuteWindow
    /// Batches received.
    public var batches: Int64
    /// Batches with no diagnostics at all: no accepted and no dropped event.
    public var cleanBatches: Int64
    /// The sum of the batches' `decodes` (absent counts as 0).
    public var decodes: Int64
    /// Distinct installs that sent a batch.
    public var installs: HyperLogLog
    /// The union of the batches' `capabilities.registeredTypes`.
    public var registeredTypes: Set<String>
    /// The highest `capabilities.maxSchemaVersion` sent, nil when no batch sent one.
    public var maxSchemaVersion: Int?

    /// Creates a rollup.
    public init(
        key: VersionKey, window: MinuteWindow, batches: Int64 = 0, cleanBatches: Int64 = 0, decodes: Int64 = 0,
        installs: HyperLogLog = HyperLogLog(), registeredTypes: Set<String> = [], maxSchemaVersion: Int? = nil
    ) {
        self.key = key
        self.window = window
        self.batches = batches
        self.cleanBatches = cleanBatches
        self.decodes = decodes
        self.installs = installs
        self.registeredTypes = registeredTypes
        self.maxSchemaVersion = maxSchemaVersion
    }

    /// Adds `other` into this rollup; both must have the same key and window.
    ///
    /// Counts saturate at `Int64.max` rather than trap, so a message with absurd counts cannot crash the store.
    public mutating func merge(_ other: VersionRollup) {
        precondition(key == other.key && window == other.window, "merging rollups of different versions")
        batches = batches.saturatingAdding(other.batches)
        cleanBatches = cleanBatches.saturatingAdding(other.cleanBatches)
        decodes = decodes.saturatingAdding(other.decodes)
        installs.merge(other.installs)
        registeredTypes.formUnion(other.registeredTypes)
        maxSchemaVersion = Self.maxOptional(maxSchemaVersion, other.maxSchemaVersion)
    }

    static func maxOptional(_ lhs: Int?, _ rhs: Int?) -> Int? {
        switch (lhs, rhs) {
        case (nil, let value), (let value, nil): return value
        case (let left?, let right?): return max(left, right)
        }
    }
}
