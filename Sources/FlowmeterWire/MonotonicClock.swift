#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Monotonic nanoseconds (`CLOCK_MONOTONIC`): the clock every deadline in the HTTP server and every delivery
/// latency in the producer is measured on. An `Int64` difference of two readings is the elapsed time; unlike
/// `ContinuousClock.Instant`, reading and subtracting involves no 128-bit arithmetic.
public enum MonotonicClock {
    /// Now, in nanoseconds since an arbitrary fixed point (the machine's boot).
    public static func nanoseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }

    /// `duration` in whole nanoseconds (truncated toward zero below a nanosecond).
    public static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
