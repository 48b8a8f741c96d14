import Foundation

/// The rounds of `flowmeter-bench ingest` reduced to medians, paired target against baseline cell by cell, and
/// checked against issue 15's goals.
public struct IngestSummary: Sendable {
    /// One target on one cell, the median of its rounds.
    public struct Row: Sendable {
        /// The target measured.
        public var target: String
        /// The conditions.
        public var cell: IngestCell
        /// Rounds the medians are taken over.
        public var rounds: Int
        /// Median accepted events per wall second.
        public var eventsPerSecond: Double
        /// Median requests answered per wall second.
        public var requestsPerSecond: Double
        /// Median accepted events per CPU second of the collector.
        public var eventsPerCPUSecond: Double
        /// Median share of its core the collector used.
        public var coreShare: Double
        /// Median of the rounds' p50 latencies, ms.
        public var p50Millis: Double
        /// Median of the rounds' p99 latencies, ms.
        public var p99Millis: Double
        /// The largest VmHWM seen in any round, MiB.
        public var peakRSSMiB: Double
        /// Median voluntary context switches per request.
        public var voluntarySwitchesPerRequest: Double
        /// Median involuntary context switches per request.
        public var involuntarySwitchesPerRequest: Double
        /// The most threads seen in any round.
        public var threads: Int
        /// Responses by status over every round.
        public var statusCounts: [Int: Int]
        /// Failed exchanges over every round.
        public var failures: Int
    }

    /// The target and the baseline on the same cell.
    public struct Pair: Sendable {
        /// The conditions.
        public var cell: IngestCell
        /// The target's medians.
        public var target: Row
        /// The baseline's medians, nil when it was not measured.
        public var baseline: Row?
        /// Target ÷ baseline events per CPU second, round by round (rounds measured by both only).
        public var roundRatios: [Double]

        /// The median of the round ratios: both targets in one round see the same drift of a shared machine.
        public var ratio: Double? { roundRatios.isEmpty ? nil : roundRatios.median }
    }

    /// One goal of issue 15 and what the run measured against it.
    public struct Verdict: Sendable, Equatable {
        /// What must hold, for example `delivered 32 plain distinct: ratio ≥ 3.00`.
        public var goal: String
        /// The measured figure, or why there is none.
        public var measured: String
        /// true when met, false when missed, nil when the run did not measure it (a narrowed matrix).
        public var passed: Bool?

        /// `PASS`, `FAIL` or `NOT MEASURED`.
        public var mark: String { passed.map { $0 ? "PASS" : "FAIL" } ?? "NOT MEASURED" }
    }

    /// The name of the target under test (`flowmeter`).
    public var targetName: String
    /// The name of the baseline (`python-peer`).
    public var baselineName: String
    /// Every target's medians, sorted by cell then target.
    public var rows: [Row]
    /// One pair per cell the target was measured on, sorted by cell.
    public var pairs: [Pair]

    /// Reduces `measurements` (any order, any number of rounds) to rows and pairs.
    public init(
        measurements: [IngestMeasurement], targetName: String = "flowmeter", baselineName: String = "python-peer"
    ) {
        self.targetName = targetName
        self.baselineName = baselineName
        let groups = Dictionary(grouping: measurements) { RowKey(target: $0.target, cell: $0.cell) }
        rows = groups.map { key, rounds in
            Row(
                target: key.target, cell: key.cell, rounds: rounds.count,
                eventsPerSecond: rounds.map(\.eventsPerSecond).median,
                requestsPerSecond: rounds.map(\.requestsPerSecond).median,
                eventsPerCPUSecond: rounds.map(\.eventsPerCPUSecond).median,
                coreShare: rounds.map(\.coreShare).median, p50Millis: rounds.map(\.p50Millis).median,
                p99Millis: rounds.map(\.p99Millis).median,
                peakRSSMiB: rounds.map(\.peakRSSMiB).max() ?? 0,
                voluntarySwitchesPerRequest: rounds.map(\.voluntarySwitchesPerRequest).median,
                involuntarySwitchesPerRequest: rounds.map(\.involuntarySwitchesPerRequest).median,
                threads: rounds.map(\.threads).max() ?? 0,
                statusCounts: rounds.reduce(into: [:]) { $0.merge($1.statusCounts, uniquingKeysWith: +) },
                failures: rounds.reduce(0) { $0 + $1.failures })
        }
        .sorted { $0.cell == $1.cell ? $0.target < $1.target : $0.cell < $1.cell }
        let rowsByKey = Dictionary(uniqueKeysWithValues: rows.map { (RowKey(target: $0.target, cell: $0.cell), $0) })
        pairs = rows.filter { $0.target == targetName }.map { row in
            let baselineRounds = Dictionary(
                measurements.filter { $0.target == baselineName && $0.cell == row.cell }.map { ($0.round, $0) }
            ) { first, _ in first }
            let ratios = measurements.filter { $0.target == targetName && $0.cell == row.cell }
                .sorted { $0.round < $1.round }
                .compactMap { measured -> Double? in
                    guard let baseline = baselineRounds[measured.round], baseline.eventsPerCPUSecond > 0 else {
                        return nil
                    }
                    return measured.eventsPerCPUSecond / baseline.eventsPerCPUSecond
                }
            return Pair(
                cell: row.cell, target: row, baseline: rowsByKey[RowKey(target: baselineName, cell: row.cell)],
                roundRatios: ratios)
        }
    }

    /// The ratio goals (issue 15's "Done when"): at 32 connections in `delivered` mode, at least `plainRatio` with
    /// plain bodies and `gzipRatio` with gzip, for each batch set; and the target's peak RSS under `rssLimitMiB` in
    /// every row (its matrix rows and any `extraRSS`, such as the spool row). A goal whose cell was not measured is
    /// reported as such, never as a pass.
    public func verdicts(
        plainRatio: Double = 3.0, gzipRatio: Double = 2.5, rssLimitMiB: Double = 256,
        extraRSS: [(label: String, peakRSSMiB: Double)] = []
    ) -> [Verdict] {
        var verdicts: [Verdict] = []
        for (encoding, minimum) in [("plain", plainRatio), ("gzip", gzipRatio)] {
            for batches in ["distinct", "repeated"] {
                let cell = IngestCell(ack: "delivered", connections: 32, encoding: encoding, batches: batches)
                let goal = "\(cell.label): \(targetName) ÷ \(baselineName) events/CPU-s ≥ " + format(minimum, 2)
                guard let pair = pairs.first(where: { $0.cell == cell }), let ratio = pair.ratio else {
                    verdicts.append(Verdict(goal: goal, measured: "not measured", passed: nil))
                    continue
                }
                verdicts.append(
                    Verdict(
                        goal: goal,
                        measured: "median \(format(ratio, 2))× over \(pair.roundRatios.count) rounds",
                        passed: ratio >= minimum))
            }
        }
        let sizes =
            rows.filter { $0.target == targetName }.map { (label: $0.cell.label, peakRSSMiB: $0.peakRSSMiB) } + extraRSS
        let goal = "\(targetName) peak RSS (VmHWM) < \(format(rssLimitMiB, 0)) MiB in every row"
        if let largest = sizes.max(by: { $0.peakRSSMiB < $1.peakRSSMiB }) {
            let over = sizes.filter { $0.peakRSSMiB >= rssLimitMiB }
            verdicts.append(
                Verdict(
                    goal: goal,
                    measured: "largest \(format(largest.peakRSSMiB, 1)) MiB (\(largest.label))"
                        + (over.isEmpty ? "" : ", \(over.count) of \(sizes.count) rows over"),
                    passed: over.isEmpty))
        } else {
            verdicts.append(Verdict(goal: goal, measured: "not measured", passed: nil))
        }
        return verdicts
    }

    private struct RowKey: Hashable {
        var target: String
        var cell: IngestCell
    }
}

/// `value` with `digits` decimals.
func format(_ value: Double, _ digits: Int) -> String {
    String(format: "%.\(digits)f", value)
}
