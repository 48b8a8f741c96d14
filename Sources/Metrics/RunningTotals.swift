import Synchronization

/// Running totals kept elsewhere (a sink's counters, a producer's rebuilds) as seen at the last scrape, so each
/// scrape adds to the exported counters only what every total gained since: the one way a process turns totals it
/// does not own into Prometheus counters.
///
/// ```swift
/// let before = seen.advance(to: sink.counters)
/// applied.advance(from: before.applied, to: now.applied)
/// ```
public final class RunningTotals<Totals: Sendable>: Sendable {
    private let seen: Mutex<Totals>

    /// Totals seen so far: `initial` (zeros) until the first ``advance(to:)``.
    public init(_ initial: Totals) {
        seen = Mutex(initial)
    }

    /// Records `now` as seen and returns what was seen before it.
    public func advance(to now: Totals) -> Totals {
        seen.withLock { seen in
            defer { seen = now }
            return seen
        }
    }
}

extension Counter {
    /// Adds what a running total gained from `before` to `now`; nothing when it did not grow.
    public func advance<Total: BinaryInteger>(from before: Total, to now: Total) {
        if now > before { increment(by: UInt64(now - before)) }
    }
}
