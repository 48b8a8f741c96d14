public import Foundation

/// The time source of a reporter: batch ages, pacing, backoff, `Retry-After` and flush timeouts all read it.
///
/// The default is ``SystemReporterClock``. Tests inject a clock they advance by hand, so that backoff and pacing are
/// exercised without sleeping.
public protocol ReporterClock: Sendable {
    /// The current wall-clock time.
    func now() -> Date

    /// Suspends until `deadline` by this clock; throws `CancellationError` as soon as the calling task is cancelled.
    func sleep(until deadline: Date) async throws
}

/// The system's wall clock, with `Task.sleep`.
public struct SystemReporterClock: ReporterClock {
    /// Creates the system clock.
    public init() {}

    /// The current wall-clock time.
    public func now() -> Date { Date() }

    /// Sleeps until `deadline`; a deadline in the past returns at once (after a cancellation check).
    public func sleep(until deadline: Date) async throws {
        let seconds = deadline.timeIntervalSinceNow
        guard seconds > 0 else {
            try Task.checkCancellation()
            return
        }
        try await Task.sleep(nanoseconds: UInt64(min(seconds, 86_400 * 365) * 1e9))
    }
}
