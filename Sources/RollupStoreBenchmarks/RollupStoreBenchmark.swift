import FlowmeterModels
import Foundation
public import RollupStore
import Rollups

/// Fills a store with a month of minute rollups and times the detector's queries against it.
///
/// `flowmeter-bench store` calls ``run(store:days:seriesCount:repetitions:)`` on a fresh store and prints the report.
/// An ``SQLRollupStore`` is filled through its bulk path (``SQLRollupStore/bulkLoad(series:versions:)``: prepared
/// inserts or COPY, with hour rows computed in memory) so that millions of rows load in seconds; any other store is
/// filled through `apply`. The store should be empty: filling writes rows for windows it assumes are new.
public enum RollupStoreBenchmark {
    /// How long one query took, and how much it returned.
    public struct Timing: Sendable, CustomStringConvertible {
        /// What was asked.
        public var name: String
        /// The fastest of the runs, in seconds.
        public var bestSeconds: Double
        /// The median of the runs, in seconds.
        public var medianSeconds: Double
        /// Rows (rollups, buckets or records) returned.
        public var rows: Int

        /// One line: name, median and best in milliseconds, rows.
        public var description: String {
            let median = String(format: "%9.1f", medianSeconds * 1000)
            let best = String(format: "%9.1f", bestSeconds * 1000)
            return
                "\(name.padding(toLength: 52, withPad: " ", startingAt: 0)) median \(median) ms  best \(best) ms  \(rows) rows"
        }
    }

    /// What a run measured.
    public struct Report: Sendable, CustomStringConvertible {
        /// Days of minute rollups written.
        public var days: Int
        /// Series written per minute.
        public var seriesCount: Int
        /// Series minute rows written.
        public var seriesMinuteRows: Int
        /// Version minute rows written.
        public var versionMinuteRows: Int
        /// Seconds the fill took, including hour rows and statistics.
        public var fillSeconds: Double
        /// The query timings, in the order run.
        public var timings: [Timing]

        /// A small table of the figures.
        public var description: String {
            var lines = [
                "store benchmark: \(days) days x \(seriesCount) series = \(seriesMinuteRows) series minute rows, "
                    + "\(versionMinuteRows) version minute rows; filled in \(String(format: "%.1f", fillSeconds)) s"
            ]
            lines += timings.map(\.description)
            return lines.joined(separator: "\n")
        }
    }

    /// Fills `store` with `days` of minute rollups for `seriesCount` series ending now (rounded down to the hour)
    /// and times the detector's queries, each `repetitions` times.
    public static func run(
        store: any RollupStore, days: Int = 30, seriesCount: Int = 50, repetitions: Int = 5
    ) throws -> Report {
        let end = (Int64(Date().timeIntervalSince1970) / 3600) * 3600
        let start = end - Int64(days) * 86_400
        let series = BenchmarkRollups.series(count: seriesCount)
        let versionKeys = Array(Set(series.map(\.versionKey))).sorted()
        var seriesRows = 0
        var versionRows = 0
        var sequence = 0
        let fillStarted = DispatchTime.now()
        for day in 0..<days {
            let dayStart = start + Int64(day) * 86_400
            var seriesRollups: [SeriesRollup] = []
            var versionRollups: [VersionRollup] = []
            seriesRollups.reserveCapacity(1440 * series.count)
            for minute in 0..<1440 {
                let window = MinuteWindow(start: dayStart + Int64(minute) * 60)
                for (index, item) in series.enumerated() {
                    seriesRollups.append(BenchmarkRollups.rollup(item, index: index, window: window))
                }
                for (index, key) in versionKeys.enumerated() {
                    versionRollups.append(BenchmarkRollups.versionRollup(key, index: index, window: window))
                }
            }
            seriesRows += seriesRollups.count
            versionRows += versionRollups.count
            if let sql = store as? SQLRollupStore {
                try sql.bulkLoad(series: seriesRollups, versions: versionRollups)
            } else {
                let partials =
                    (seriesRollups.map { PartialRollup.Rollup.series($0) }
                    + versionRollups.map { PartialRollup.Rollup.version($0) })
                    .map { rollup in
                        sequence += 1
                        return PartialRollup(id: "bench/\(sequence)/0", collector: "bench", rollup: rollup)
                    }
                _ = try store.apply(partials)
            }
        }
        if let sql = store as? SQLRollupStore { try sql.analyze() }
        let fillSeconds = seconds(since: fillStarted)

        let from = Timestamp(secondsSinceEpoch: start)
        let to = Timestamp(secondsSinceEpoch: end)
        let recent = Timestamp(secondsSinceEpoch: end - 4 * 3600)
        let release = SeriesQuery(from: from, to: to, buildConfiguration: .release)
        let queries: [(String, () throws -> Int)] = [
            ("series buckets 30 d x 1 h (release)", { try store.seriesBuckets(release, bucketSeconds: 3600).count }),
            (
                "series buckets 30 d x 1 d (one app)",
                {
                    try store.seriesBuckets(
                        SeriesQuery(from: from, to: to, appID: series[0].appID), bucketSeconds: 86_400
                    ).count
                }
            ),
            (
                "series buckets 4 h x 5 min (release)",
                {
                    try store.seriesBuckets(
                        SeriesQuery(from: recent, to: to, buildConfiguration: .release), bucketSeconds: 300
                    )
                    .count
                }
            ),
            (
                "series rollups 4 h (unknownType, release)",
                {
                    try store.seriesRollups(
                        SeriesQuery(from: recent, to: to, kinds: [.unknownType], buildConfiguration: .release)
                    ).count
                }
            ),
            (
                "version buckets 30 d x 1 h",
                {
                    try store.versionBuckets(from: from, to: to, appID: nil, bucketSeconds: 3600).count
                }
            ),
            ("version rollups 4 h", { try store.versionRollups(from: recent, to: to, appID: nil).count }),
            (
                "firstSeen (unknownType, release)",
                {
                    try store.firstSeen(appID: nil, kind: .unknownType, buildConfiguration: .release).count
                }
            ),
            (
                "series buckets 30 d x 5 min (minute table, worst)",
                {
                    try store.seriesBuckets(release, bucketSeconds: 300).count
                }
            ),
        ]
        var timings: [Timing] = []
        for (name, query) in queries {
            var runs: [Double] = []
            var rows = 0
            for _ in 0..<max(1, repetitions) {
                let started = DispatchTime.now()
                rows = try query()
                runs.append(seconds(since: started))
            }
            runs.sort()
            timings.append(Timing(name: name, bestSeconds: runs[0], medianSeconds: runs[runs.count / 2], rows: rows))
        }
        return Report(
            days: days, seriesCount: seriesCount, seriesMinuteRows: seriesRows, versionMinuteRows: versionRows,
            fillSeconds: fillSeconds, timings: timings)
    }

    private static func seconds(since start: DispatchTime) -> Double {
        Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
    }
}
