import Detector
import FlowmeterModels
import Foundation
import Rollups

/// How fresh the store is, as every query prints it: a footer line (`data complete up to 12:04 UTC; 3 partitions of
/// flowmeter.batches.v1 current`, or `1 of 3 partitions of flowmeter.batches.v1 3 min behind`), a `freshness` key
/// in JSON, and for `check` and `ungated` a warning when the window they read is not complete.
struct FreshnessNote: Sendable {
    /// The store's freshness judged now.
    let assessment: FreshnessAssessment
    /// The window the query read, if it read one.
    let window: QueryWindow?
    /// Whether an incomplete window is worth a warning (`check`, `ungated`: uncounted records can turn a gate).
    let warns: Bool

    /// Reads and judges the store's freshness at `now` for a query of `window`. Read it before the query's own
    /// reads: what they find is then at least as complete as this says.
    static func load(
        _ reader: any RollupReader, window: QueryWindow?, warns: Bool = false, now: Timestamp = Timestamp(Date())
    ) throws -> FreshnessNote {
        FreshnessNote(
            assessment: FreshnessAssessment(try reader.freshness(), now: now), window: window, warns: warns)
    }

    /// Whether the window holds everything appended to the log for it, as far as the store has counted (true when
    /// nothing is known).
    var isWindowComplete: Bool {
        window.map { assessment.isComplete(endingAt: $0.to) } ?? assessment.behind.isEmpty
    }

    /// The footer: the freshness line, and a retention line when the window reaches rows retention coarsened.
    var text: String {
        var lines = [freshnessLine]
        if let retention = retentionLine { lines.append(retention) }
        return lines.flatMap { Terminal.wrapped($0, indent: "") }.joined(separator: "\n")
    }

    /// `warning: …` for standard error when the window is not complete, else nil.
    var warning: String? {
        guard warns, let window, !isWindowComplete else { return nil }
        let missing = assessment.incompleteCollectors(endingAt: window.to)
        let names = missing.map { Terminal.name($0.name) }.joined(separator: ", ")
        let complete =
            assessment.completeUpTo.map { "data is complete only up to \(time($0)) UTC" } ?? "data is incomplete"
        return "warning: the window ends at \(time(window.to)) UTC but \(complete) (behind: \(names)); the answer may "
            + "miss their events, and a gate or share computed from it may be wrong"
    }

    private var freshnessLine: String {
        guard !assessment.isUnknown else {
            return "freshness unknown: no partition of the batches topic counted in the store yet"
        }
        func partitions(_ count: Int) -> String { count == 1 ? "1 partition" : "\(count) partitions" }
        // Behind first (what a reader must know), then current, stopped and gone.
        var parts: [String] = []
        for source in assessment.behind {
            let name = Terminal.name(source.name)
            var phrase =
                source.partitionsBehind >= source.partitions
                ? "all \(partitions(source.partitions)) of \(name)"
                : "\(source.partitionsBehind) of \(partitions(source.partitions)) of \(name)"
            phrase += source.lagSeconds.map { " " + Self.duration($0) + " behind" } ?? " behind"
            let unreported = source.partitions - source.partitionsReported
            if unreported > 0 { phrase += " (\(unreported) not counted yet)" }
            parts.append(phrase)
        }
        for source in assessment.collectors where source.status == .current {
            parts.append("\(partitions(source.partitions)) of \(Terminal.name(source.name)) current")
        }
        for source in assessment.collectors where source.status == .stopped {
            parts.append("\(Terminal.name(source.name)) stopped")
        }
        for source in assessment.collectors where source.status == .gone {
            parts.append("\(Terminal.name(source.name)) gone (last heard \(time(source.lastHeard)) UTC)")
        }
        let head =
            assessment.completeUpTo.map { "data complete up to \(time($0)) UTC" }
            ?? "data completeness unknown"
        return head + "; " + parts.joined(separator: ", ")
    }

    private var retentionLine: String? {
        guard let from = window?.from else { return nil }
        let retention = assessment.retention
        if retention.isTruncated(from: from), let hours = retention.hoursBefore {
            return "retention: nothing is kept before \(time(hours)) UTC, and minutes only as hours before "
                + "\(retention.minutesBefore.map(time) ?? time(hours)) UTC: this window reads hourly rows there"
        }
        if retention.isCoarsened(from: from), let minutes = retention.minutesBefore {
            return "retention: minutes before \(time(minutes)) UTC are kept only as hours: this window reads hourly "
                + "rows there"
        }
        return nil
    }

    /// `12:04` when `timestamp` is on the UTC day of the assessment, else `2026-11-30 12:04`.
    private func time(_ timestamp: Timestamp) -> String {
        let text = CellFormat.time(timestamp)
        return text.prefix(10) == CellFormat.time(assessment.now).prefix(10) ? String(text.suffix(5)) : text
    }

    /// `45 s`, `3 min`, `5 h`, `2 d`.
    static func duration(_ seconds: Int64) -> String {
        if seconds < 120 { return "\(seconds) s" }
        if seconds < 120 * 60 { return "\(seconds / 60) min" }
        if seconds < 48 * 3600 { return "\(seconds / 3600) h" }
        return "\(seconds / 86_400) d"
    }

    /// The `freshness` object: `completeUpTo`, `windowComplete`, `collectors`, `retention`.
    var jsonValue: JSONValue {
        func stamp(_ timestamp: Timestamp?) -> JSONValue { timestamp.map { .string($0.rfc3339String) } ?? .null }
        let collectors: [JSONValue] = assessment.collectors.map { collector in
            .object([
                ("collector", .string(collector.name)), ("status", .string(collector.status.rawValue)),
                ("completeUpTo", stamp(collector.completeUpTo)),
                ("lagSeconds", collector.lagSeconds.map { .integer($0) } ?? .null),
                ("lastHeard", stamp(collector.lastHeard)),
                ("partitions", .integer(Int64(collector.partitions))),
                ("partitionsReported", .integer(Int64(collector.partitionsReported))),
                ("partitionsBehind", .integer(Int64(collector.partitionsBehind))),
            ])
        }
        let retention = assessment.retention
        return .object([
            ("completeUpTo", stamp(assessment.completeUpTo)),
            ("windowComplete", .bool(isWindowComplete)),
            ("collectors", .array(collectors)),
            (
                "retention",
                .object([
                    ("minutesBefore", stamp(retention.minutesBefore)), ("hoursBefore", stamp(retention.hoursBefore)),
                    ("coarsened", .bool(window.map { retention.isCoarsened(from: $0.from) } ?? false)),
                    ("truncated", .bool(window.map { retention.isTruncated(from: $0.from) } ?? false)),
                ])
            ),
        ])
    }

    /// `json` (an object) with the `freshness` key added last; anything else unchanged.
    func appended(to json: JSONValue) -> JSONValue {
        guard case .object(let members) = json else { return json }
        return .object(members + [("freshness", jsonValue)])
    }
}
