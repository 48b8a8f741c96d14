public import FlowmeterModels
public import Rollups

/// When each widget type was reported as release `unknownType` before and in a window, hour by hour: what tells a
/// new ungated type from an ongoing one and from one that came back (``UngatedStatus``).
///
/// Built from hourly series buckets over a look-back and the store's all-history first-seen table. Quiet is measured
/// in whole hours, from the end of the last hour with events to the start of the next, so a measured quiet stretch
/// is never longer than the real one: a type is called regressed only when it certainly was quiet that long.
public struct UnknownTypeHistory: Sendable, Hashable {
    struct TypeKey: Hashable {
        var appID: String
        var widgetType: String
    }

    /// Hour starts with events, ascending, per type.
    private var hours: [TypeKey: [Int64]] = [:]
    /// The earliest release `unknownType` occurrence ever, per type.
    private var firstSeen: [TypeKey: Timestamp] = [:]
    /// The first hour the buckets cover; anything earlier is known only through `firstSeen`.
    private let lookbackStart: Int64

    /// An empty history: every type is new or ongoing by `firstSeen` alone.
    public init() {
        lookbackStart = .min
    }

    /// Indexes `buckets` (hourly, release `unknownType`; other buckets are ignored) that start at `lookbackStart`,
    /// and `firstSeen` (release `unknownType`, all history).
    public init(buckets: [SeriesBucket], firstSeen: [TypeFirstSeen], lookbackStart: Timestamp) {
        self.lookbackStart = lookbackStart.secondsSinceEpoch
        var hours: [TypeKey: Set<Int64>] = [:]
        for bucket in buckets
        where bucket.series.kind == .unknownType && bucket.series.buildConfiguration == .release && bucket.events > 0 {
            hours[TypeKey(appID: bucket.series.appID, widgetType: bucket.series.widgetType), default: []].insert(
                bucket.bucketStart)
        }
        self.hours = hours.mapValues { $0.sorted() }
        for seen in firstSeen where seen.kind == .unknownType {
            let key = TypeKey(appID: seen.appID, widgetType: seen.widgetType)
            if let known = self.firstSeen[key], known <= seen.firstSeen { continue }
            self.firstSeen[key] = seen.firstSeen
        }
    }

    /// The status of `widgetType` of `appID` for the window [`from`, `to`), with the end of the last hour it was
    /// seen before it came back when it regressed (the look-back's start when it was quiet all through it).
    ///
    /// Regressed: some hour with events in the window follows a quiet stretch of at least `quiet`, and something came
    /// before that stretch. Else ongoing when it was first seen before `from`; else new.
    public func status(appID: String, widgetType: String, from: Timestamp, to: Timestamp, quiet: Duration)
        -> (status: UngatedStatus, lastSeenBefore: Timestamp?)
    {
        let key = TypeKey(appID: appID, widgetType: widgetType)
        let first = firstSeen[key]
        var occurrences = hours[key] ?? []
        // Seen before the look-back: stand in with the hour just before it, so quiet counts from the look-back's
        // start at most.
        if let first, first.secondsSinceEpoch < lookbackStart, lookbackStart != .min {
            occurrences.insert(lookbackStart - 3600, at: 0)
        }
        let quietSeconds = quiet.components.seconds
        let windowHour = Self.floorToHour(from.secondsSinceEpoch)
        var regressedAfter: Int64?
        for (previous, next) in zip(occurrences, occurrences.dropFirst())
        where next >= windowHour && next < to.secondsSinceEpoch && next - (previous + 3600) >= quietSeconds {
            regressedAfter = previous + 3600
        }
        if let regressedAfter {
            return (.regressed, Timestamp(secondsSinceEpoch: regressedAfter))
        }
        if let first, first < from { return (.ongoing, nil) }
        return (.new, nil)
    }

    private static func floorToHour(_ seconds: Int64) -> Int64 {
        let quotient = seconds / 3600
        return (seconds % 3600 < 0 ? quotient - 1 : quotient) * 3600
    }
}
