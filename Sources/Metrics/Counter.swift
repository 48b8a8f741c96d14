import Synchronization

/// A monotonically increasing count, such as requests served; one labelled child of a `CounterFamily`.
///
/// Keep the handle that `CounterFamily.labels(_:)` returns and call `increment` on it: one relaxed atomic add,
/// no lock and no lookup. Safe from any thread.
public final class Counter: Sendable {
    private let count = Atomic<UInt64>(0)

    init() {}

    /// Adds `amount` (default 1); wraps around at 2^64, which at a billion per second takes 584 years.
    @inlinable public func increment(by amount: UInt64 = 1) {
        add(amount)
    }

    @usableFromInline func add(_ amount: UInt64) {
        count.wrappingAdd(amount, ordering: .relaxed)
    }

    /// The current count.
    public var value: UInt64 { count.load(ordering: .relaxed) }
}
