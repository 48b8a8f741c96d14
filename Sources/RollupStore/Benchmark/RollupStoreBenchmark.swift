import FlowmeterModels
import Foundation
import Rollups

/// Fills a store with a month of minute rollups and times the detector's queries against it.
///
/// `flowmeter-bench store` calls ``run(store:days:seriesCount:)`` on a fresh store and prints the report. SQL stores
/// are filled through a bulk path (prepared inserts or COPY, with hour rows computed in memory) so that millions of
/// rows load in seconds; any other store is filled through `apply`. The store should be empty: filling writes rows
/// for windows it assumes are new.
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
        let series = makeSeries(count: seriesCount)
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
                    seriesRollups.append(rollup(item, index: index, window: window))
                }
                for (index, key) in versionKeys.enumerated() {
                    versionRollups.append(versionRollup(key, index: index, window: window))
                }
            }
            seriesRows += seriesRollups.count
            versionRows += versionRollups.count
            if let sql = store as? SQLiteRollupStore {
                try sql.core.bulkLoad(series: seriesRollups, versions: versionRollups)
            } else if let sql = store as? PostgresRollupStore {
                try sql.core.bulkLoad(series: seriesRollups, versions: versionRollups)
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
        if let sql = store as? SQLiteRollupStore { try sql.core.analyze() }
        if let sql = store as? PostgresRollupStore { try sql.core.analyze() }
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

    /// Series spread over three apps, two versions, both build configurations, several kinds and widget types.
    private static func makeSeries(count: Int) -> [RollupSeries] {
        let kinds: [DiagnosticKind] = [.unknownType, .unknownType, .malformedPayload, .droppedElement]
        return (0..<count).map { index in
            RollupSeries(
                appID: "com.example.app\(index % 3)", platform: index % 2 == 0 ? "ios" : "android",
                appVersion: "5.\(index % 2)", buildConfiguration: index % 5 == 4 ? .debug : .release,
                kind: kinds[index % kinds.count], widgetType: "widget_\(index)")
        }
    }

    private static func rollup(_ series: RollupSeries, index: Int, window: MinuteWindow) -> SeriesRollup {
        // A daily cycle plus per-series scale: realistic enough for query costs, which do not depend on values.
        let phase = Double((window.start / 60 + Int64(index) * 37) % 1440) / 1440
        let events = Int64(3 + Double(index % 7 + 1) * 10 * (1 + sin(phase * 2 * .pi)))
        var installs = HyperLogLog()
        for install in 0..<Int(1 + events % 3) {
            installs.insert(
                hash: UInt64(truncatingIfNeeded: window.start &* 31 &+ Int64(index * 7 + install))
                    &* 0x9E37_79B9_7F4A_7C15)
        }
        return SeriesRollup(
            series: series, window: window, events: events, installs: installs,
            firstSeen: Timestamp(secondsSinceEpoch: window.start + 1),
            lastSeen: Timestamp(secondsSinceEpoch: window.start + 58),
            releases: ["page-api@2026.\(window.start / 86_400 % 5)": events],
            samples: [RollupSample(codingPath: "Index 1.children", message: "unknown type", pageID: "home")])
    }

    private static func versionRollup(_ key: VersionKey, index: Int, window: MinuteWindow) -> VersionRollup {
        var installs = HyperLogLog()
        installs.insert(hash: UInt64(truncatingIfNeeded: window.start &+ Int64(index)) &* 0x9E37_79B9_7F4A_7C15)
        return VersionRollup(
            key: key, window: window, batches: 40, cleanBatches: 30, decodes: 400, installs: installs,
            registeredTypes: ["hero", "grid", "carousel"], maxSchemaVersion: 3)
    }
}
