import FlowmeterModels

/// The window starts a read covers, and which of them the hour tables can answer.
package enum WindowRange {
    /// The window starts `from..<to` selects: the smallest start at or after `from`, up to the first at or after `to`.
    static func starts(from: Timestamp, to: Timestamp) -> Range<Int64> {
        let lower = from.secondsSinceEpoch + (from.nanoseconds > 0 ? 1 : 0)
        let upper = to.secondsSinceEpoch + (to.nanoseconds > 0 ? 1 : 0)
        return lower..<max(lower, upper)
    }

    /// The parts of `range` to read: whole hours from the hour table when every hour falls inside one bucket
    /// (`bucketSeconds` a multiple of 3600), the ragged minutes at either end from the minute table.
    static func split(_ range: Range<Int64>, bucketSeconds: Int64) -> [(range: Range<Int64>, isHours: Bool)] {
        guard bucketSeconds % 3600 == 0 else { return [(range, false)] }
        let firstHour = ceilToHour(range.lowerBound)
        let lastHour = hourStart(range.upperBound)
        guard firstHour < lastHour else { return [(range, false)] }
        var parts: [(range: Range<Int64>, isHours: Bool)] = [(firstHour..<lastHour, true)]
        if range.lowerBound < firstHour { parts.append((range.lowerBound..<firstHour, false)) }
        if lastHour < range.upperBound { parts.append((lastHour..<range.upperBound, false)) }
        return parts
    }

    /// The parts of `range` to read once retention deleted the minute rows before `minutesBefore` (a whole hour):
    /// the part before it from the hour table (hour rows whose start lies in it), the rest as `isHours` says.
    static func coarsened(_ range: Range<Int64>, isHours: Bool, minutesBefore: Int64?) -> [(
        range: Range<Int64>, isHours: Bool
    )] {
        guard !isHours, let horizon = minutesBefore, range.lowerBound < horizon else { return [(range, isHours)] }
        guard horizon < range.upperBound else { return [(range, true)] }
        return [(range.lowerBound..<horizon, true), (horizon..<range.upperBound, false)]
    }

    /// The start of the hour that holds `seconds` (epoch seconds, negative ones too); `package` for the store
    /// benchmark's hour rows.
    package static func hourStart(_ seconds: Int64) -> Int64 {
        seconds >= 0 ? seconds / 3600 * 3600 : (seconds - 3599) / 3600 * 3600
    }

    private static func ceilToHour(_ seconds: Int64) -> Int64 {
        let floor = hourStart(seconds)
        return floor == seconds ? floor : floor + 3600
    }
}
