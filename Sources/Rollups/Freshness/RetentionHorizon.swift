public import FlowmeterModels

/// What retention has removed from a store: minute rows before `minutesBefore` (their hours remain), and every row
/// before `hoursBefore`.
///
/// Both are whole hours. A read of minutes before `minutesBefore` is answered from the hourly rows, one per hour
/// (its window the hour's start); nothing is left before `hoursBefore`.
public struct RetentionHorizon: Sendable, Hashable {
    /// Minute rows before this instant were deleted; nil when retention never removed any.
    public var minutesBefore: Timestamp?
    /// Hour rows before this instant were deleted; nil when retention never removed any.
    public var hoursBefore: Timestamp?

    /// Creates a horizon; nil for what was never pruned.
    public init(minutesBefore: Timestamp? = nil, hoursBefore: Timestamp? = nil) {
        self.minutesBefore = minutesBefore
        self.hoursBefore = hoursBefore
    }

    /// Whether a read starting at `from` reaches windows whose minutes retention has merged into hours.
    public func isCoarsened(from: Timestamp) -> Bool {
        minutesBefore.map { from < $0 } ?? false
    }

    /// Whether a read starting at `from` reaches windows retention has removed altogether.
    public func isTruncated(from: Timestamp) -> Bool {
        hoursBefore.map { from < $0 } ?? false
    }
}
