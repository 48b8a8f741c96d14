import RollupStore
import Rollups

/// The benchmark's fast fill: minute rows as given, hour rows and first-seen times computed in memory, all written
/// through the store's bulk path instead of merged one by one.
extension SQLRollupStore {
    /// Writes `series` and `versions` (minute rollups for windows that hold no rows yet) with their hour rows and
    /// first-seen times, in one transaction; no applied ids are recorded.
    func bulkLoad(series: [SeriesRollup], versions: [VersionRollup]) throws {
        var rows = NewRollupRows()
        rows.seriesMinutes = series
        rows.seriesHours = Self.hours(of: series)
        var earliest: [RollupSeries: SeriesRollup] = [:]
        for rollup in series where earliest[rollup.series].map({ rollup.firstSeen < $0.firstSeen }) ?? true {
            earliest[rollup.series] = rollup
        }
        rows.firstSeen = Array(earliest.values)
        rows.versionMinutes = versions
        rows.versionHours = Self.hours(of: versions)
        try insertNewRows(rows)
    }

    /// `rollups` merged per key per hour, each window the start of its hour.
    private static func hours<Rollup: WindowedRollup>(of rollups: [Rollup]) -> [Rollup] {
        var hours: [HourKey<Rollup.Key>: Rollup] = [:]
        for rollup in rollups {
            var hourly = rollup
            hourly.window = MinuteWindow(start: WindowRange.hourStart(rollup.window.start))
            let key = HourKey(key: rollup.rollupKey, hourStart: hourly.window.start)
            if hours[key] == nil { hours[key] = hourly } else { hours[key]!.merge(hourly) }
        }
        return Array(hours.values)
    }
}

/// A series or app build and the hour it falls in.
private struct HourKey<Key: Hashable>: Hashable {
    var key: Key
    var hourStart: Int64
}
