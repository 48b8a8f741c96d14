public import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#endif

/// The time source of a reporter: wall-clock time for what is sent and stored (`sentAt`, batch file names), and a
/// clock nobody can set for everything measured (pacing, backoff, `Retry-After`, batch ages, flush timeouts).
///
/// The default is ``SystemReporterClock``. Tests inject a clock they advance by hand, so that backoff and pacing are
/// exercised without sleeping, and a wall clock they can set back and forth.
public protocol ReporterClock: Sendable {
    /// The current wall-clock time; the user or the network may set it back and forth.
    func now() -> Date

    /// Suspends until `deadline` by the wall clock; throws `CancellationError` as soon as the calling task is
    /// cancelled. The reporter itself sleeps with ``sleep(untilUptime:)``.
    func sleep(until deadline: Date) async throws

    /// Seconds since an arbitrary fixed point on a clock that only moves forward, with the time the device slept;
    /// the reporter measures every interval on it, so setting the wall clock neither stalls nor hurries it.
    func uptime() -> TimeInterval

    /// Suspends until ``uptime()`` reaches `deadline`; throws `CancellationError` as soon as the calling task is
    /// cancelled.
    func sleep(untilUptime deadline: TimeInterval) async throws
}

extension ReporterClock {
    /// The system's clock that never goes back, for clocks written before ``ReporterClock/uptime()`` existed.
    public func uptime() -> TimeInterval { SystemReporterClock.bootClockSeconds() }

    /// Sleeps for what is left until `deadline`, through ``ReporterClock/sleep(until:)``.
    public func sleep(untilUptime deadline: TimeInterval) async throws {
        try await sleep(until: now().addingTimeInterval(deadline - uptime()))
    }
}

/// The system's wall clock, a clock that counts the time asleep and cannot be set, and `Task.sleep`.
public struct SystemReporterClock: ReporterClock {
    /// Creates the system clock.
    public init() {}

    /// The current wall-clock time.
    public func now() -> Date { Date() }

    /// Sleeps until `deadline`; a deadline in the past returns at once (after a cancellation check).
    public func sleep(until deadline: Date) async throws {
        try await Self.sleep(seconds: deadline.timeIntervalSinceNow)
    }

    /// Seconds since boot, the time asleep included (see ``bootClockSeconds()``).
    public func uptime() -> TimeInterval { Self.bootClockSeconds() }

    /// Sleeps until ``uptime()`` reaches `deadline`; a deadline in the past returns at once.
    public func sleep(untilUptime deadline: TimeInterval) async throws {
        try await Self.sleep(seconds: deadline - uptime())
    }

    private static func sleep(seconds: TimeInterval) async throws {
        guard seconds > 0 else {
            try Task.checkCancellation()
            return
        }
        try await Task.sleep(nanoseconds: UInt64(min(seconds, 86_400 * 365) * 1e9))
    }

    /// Seconds since boot with the time asleep: `CLOCK_MONOTONIC` on Apple platforms (which counts sleep there),
    /// `CLOCK_BOOTTIME` on Linux (its `CLOCK_MONOTONIC` stops during suspend). Neither can be set. Elsewhere
    /// `ProcessInfo.systemUptime`, which stops while the device sleeps: ages then run slow, never fast.
    static func bootClockSeconds() -> TimeInterval {
        #if canImport(Darwin)
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            return TimeInterval(now.tv_sec) + TimeInterval(now.tv_nsec) / 1e9
        #elseif canImport(Glibc)
            var now = timespec()
            clock_gettime(CLOCK_BOOTTIME, &now)
            return TimeInterval(now.tv_sec) + TimeInterval(now.tv_nsec) / 1e9
        #else
            return ProcessInfo.processInfo.systemUptime
        #endif
    }
}
