public import Foundation

/// How much the queue may hold on disk; over either limit the oldest batches go first, counted as dropped.
public struct StorageLimits: Sendable, Hashable {
    /// Bytes of batch files, open batch included.
    public var maxBytes = 10 * 1024 * 1024
    /// Seconds a batch may wait, counted on the clock nobody sets (``ReporterClock/uptime()``); a batch an earlier
    /// run left starts from the creation time in its file name, or from when it was found if that name is
    /// implausible.
    public var maxAge: TimeInterval = 7 * 86_400
    /// Bytes `record` may buffer in memory while the disk writer catches up; past it new events are dropped
    /// (`queue_overflow`).
    public var maxPendingWriteBytes = 1024 * 1024

    /// Creates the default limits.
    public init() {}
}
