import Foundation

extension IngestSummary {
    /// Target against baseline, cell by cell: the median events per CPU second of each and the median of the
    /// round-by-round ratios.
    public var ratioTable: Table {
        var table = Table(
            headings: [
                "ack", "conns", "encoding", "batches", "\(targetName) ev/CPU-s", "\(baselineName) ev/CPU-s",
                "ratio", "round ratios",
            ], rightAligned: [1, 4, 5, 6])
        for pair in pairs {
            table.rows.append([
                pair.cell.ack, String(pair.cell.connections), pair.cell.encoding, pair.cell.batches,
                format(pair.target.eventsPerCPUSecond, 0),
                pair.baseline.map { format($0.eventsPerCPUSecond, 0) } ?? "-",
                pair.ratio.map { format($0, 2) + "×" } ?? "-",
                pair.roundRatios.map { format($0, 2) }.joined(separator: " "),
            ])
        }
        return table
    }

    /// Every target on every cell: medians of the rounds, the largest peak RSS, context switches per request.
    public var rowTable: Table {
        var table = Table(
            headings: [
                "target", "ack", "conns", "encoding", "batches", "events/s", "ev/CPU-s", "core %", "p50 ms", "p99 ms",
                "RSS MiB",
                "vol cs/req", "invol cs/req", "threads", "statuses",
            ], rightAligned: [2, 5, 6, 7, 8, 9, 10, 11, 12, 13])
        for row in rows {
            var statuses = row.statusCounts.sorted { $0.key < $1.key }.map { "\($0.key)×\($0.value)" }
                .joined(separator: " ")
            if row.failures > 0 { statuses += " failures×\(row.failures)" }
            table.rows.append([
                row.target, row.cell.ack, String(row.cell.connections), row.cell.encoding, row.cell.batches,
                format(row.eventsPerSecond, 0), format(row.eventsPerCPUSecond, 0), format(100 * row.coreShare, 0),
                format(row.p50Millis, 2),
                format(row.p99Millis, 2), format(row.peakRSSMiB, 1), format(row.voluntarySwitchesPerRequest, 2),
                format(row.involuntarySwitchesPerRequest, 2), String(row.threads), statuses,
            ])
        }
        return table
    }

    /// One line per goal and a last line that says whether all passed; a goal not measured keeps the run from
    /// passing.
    public static func verdictLines(_ verdicts: [Verdict]) -> [String] {
        let failed = verdicts.filter { $0.passed == false }.count
        let unmeasured = verdicts.filter { $0.passed == nil }.count
        let overall =
            failed > 0
            ? "FAIL (\(failed) of \(verdicts.count) goals missed"
                + (unmeasured > 0 ? ", \(unmeasured) not measured)" : ")")
            : unmeasured > 0
                ? "INCOMPLETE (\(unmeasured) of \(verdicts.count) goals not measured, the rest pass)"
                : "PASS (all \(verdicts.count) goals)"
        return verdicts.map {
            "\($0.mark.padding(toLength: 12, withPad: " ", startingAt: 0)) \($0.goal): \($0.measured)"
        }
            + ["verdict: \(overall)"]
    }
}
