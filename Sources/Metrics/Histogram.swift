import Synchronization

/// A distribution of observed values in fixed buckets, such as request latency; one child of a `HistogramFamily`.
///
/// `observe` finds the value's bucket by a linear scan of the (few) bounds and makes two atomic updates; no lock.
/// Readers may see a count and sum from slightly different instants, as with every Prometheus client.
public final class Histogram: Sendable {
    /// The upper bounds of the buckets, ascending, without `+Inf` (which is implied).
    public let upperBounds: [Double]
    // One counter per bound plus the +Inf bucket, not cumulative; rendering accumulates.
    private let bucketCounts: [Counter]
    private let sumBits = Atomic<UInt64>(0.0.bitPattern)

    init(upperBounds: [Double]) {
        self.upperBounds = upperBounds
        bucketCounts = (0...upperBounds.count).map { _ in Counter() }
    }

    /// Records one observation of `value`; NaN is counted in `+Inf` and makes the sum NaN, as in Prometheus.
    public func observe(_ value: Double) {
        var index = 0
        while index < upperBounds.count && !(value <= upperBounds[index]) { index += 1 }
        bucketCounts[index].increment()
        var current = sumBits.load(ordering: .relaxed)
        while true {
            let next = (Double(bitPattern: current) + value).bitPattern
            let (exchanged, original) = sumBits.weakCompareExchange(
                expected: current, desired: next, ordering: .relaxed)
            if exchanged { return }
            current = original
        }
    }

    /// Records a time given in nanoseconds, in seconds (the Prometheus base unit), without `Duration`'s 128-bit
    /// arithmetic.
    public func observe(nanoseconds: Int64) {
        observe(Double(nanoseconds) * 1e-9)
    }

    /// Records a duration in seconds, the Prometheus base unit.
    public func observe(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        observe(Double(seconds) + Double(attoseconds) * 1e-18)
    }

    /// The number of observations (the sum of the buckets, so it always equals the `+Inf` bucket).
    public var count: UInt64 { cumulativeCounts.last ?? 0 }

    /// The sum of all observations.
    public var sum: Double { Double(bitPattern: sumBits.load(ordering: .relaxed)) }

    /// Cumulative counts per bucket, one per `upperBounds` element and a last one for `+Inf`.
    public var cumulativeCounts: [UInt64] {
        var running: UInt64 = 0
        return bucketCounts.map { counter in
            running &+= counter.value
            return running
        }
    }
}
