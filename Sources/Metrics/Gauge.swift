import Synchronization

/// A value that goes up and down, such as bytes in a spool; one labelled child of a `GaugeFamily`.
///
/// Stored as the bits of a `Double` in one atomic word: `set` is a store, `increment` a compare-and-swap loop.
/// Safe from any thread.
public final class Gauge: Sendable {
    private let bits = Atomic<UInt64>(0.0.bitPattern)

    init() {}

    /// Replaces the value.
    public func set(_ value: Double) {
        bits.store(value.bitPattern, ordering: .relaxed)
    }

    /// Adds `amount` (default 1), which may be negative.
    public func increment(by amount: Double = 1) {
        var current = bits.load(ordering: .relaxed)
        while true {
            let next = (Double(bitPattern: current) + amount).bitPattern
            let (exchanged, original) = bits.weakCompareExchange(
                expected: current, desired: next, ordering: .relaxed)
            if exchanged { return }
            current = original
        }
    }

    /// Subtracts `amount` (default 1).
    public func decrement(by amount: Double = 1) {
        increment(by: -amount)
    }

    /// The current value.
    public var value: Double { Double(bitPattern: bits.load(ordering: .relaxed)) }
}
