public import FlowmeterModels

/// One minute of time, named by its first second: epoch seconds, always a multiple of 60.
///
/// Encodes as the bare number (`"window": 1764493140`).
public struct MinuteWindow: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The first second of the minute, in seconds since the epoch; a multiple of 60.
    public let start: Int64

    /// Creates the window starting at `start`; `start` must be a multiple of 60.
    public init(start: Int64) {
        precondition(start % 60 == 0, "a minute window starts on a multiple of 60 seconds")
        self.start = start
    }

    /// The minute that holds `instant` (floor, also for instants before the epoch).
    public init(containing instant: Timestamp) {
        let seconds = instant.secondsSinceEpoch
        self.start = (seconds >= 0 ? seconds / 60 : (seconds - 59) / 60) * 60
    }

    /// The first instant of the window.
    public var startTimestamp: Timestamp { Timestamp(secondsSinceEpoch: start) }

    /// The start of the `bucketSeconds`-long bucket (aligned to multiples of `bucketSeconds` since the epoch) that
    /// holds this window; `bucketSeconds` must be positive.
    public func bucketStart(bucketSeconds: Int64) -> Int64 {
        precondition(bucketSeconds > 0, "bucketSeconds must be positive")
        return start >= 0
            ? start / bucketSeconds * bucketSeconds : (start - bucketSeconds + 1) / bucketSeconds * bucketSeconds
    }

    /// The start as RFC 3339.
    public var description: String { startTimestamp.rfc3339String }

    public static func < (lhs: MinuteWindow, rhs: MinuteWindow) -> Bool { lhs.start < rhs.start }

}
