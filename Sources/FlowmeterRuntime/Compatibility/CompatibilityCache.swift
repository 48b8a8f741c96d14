import Synchronization

/// The compatibility answers in memory: the last ``CompatibilityIndex`` the refresh built, swapped whole.
///
/// Readers (the HTTP workers) take the current index under a lock held only for the swap of one reference; they
/// never wait on the store. Bounded by the index's `maxVersions`.
public final class CompatibilityCache: Sendable {
    private let current = Mutex<CompatibilityIndex?>(nil)

    /// An empty cache: until the first refresh, every request gets 503.
    public init() {}

    /// The current index, nil before the first refresh.
    public var index: CompatibilityIndex? {
        current.withLock { $0 }
    }

    /// Replaces the index.
    public func replace(with index: CompatibilityIndex) {
        current.withLock { $0 = index }
    }
}
