/// What applying a list of partial rollups did.
public struct RollupApplyResult: Hashable, Sendable {
    /// Partial rollups merged in.
    public var applied: Int
    /// Partial rollups skipped because their id was applied before (or appeared earlier in the same list).
    public var duplicates: Int

    /// Creates a result.
    public init(applied: Int, duplicates: Int) {
        self.applied = applied
        self.duplicates = duplicates
    }
}
