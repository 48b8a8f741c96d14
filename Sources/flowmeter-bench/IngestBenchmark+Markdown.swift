import Foundation
import IngestBenchmarks

extension IngestBenchmark {
    /// The summary as Markdown, for pasting into docs/performance.md: how it was run, the ratio table, the goals,
    /// the latency and spool notes, then every row.
    static func writeMarkdown(
        to path: String, commit: (short: String, isDirty: Bool), arguments: [String], header: [String],
        summary: IngestSummary, verdicts: [IngestSummary.Verdict], notes: [String]
    ) throws {
        var lines = [
            "# flowmeter-bench ingest at \(commit.short)\(commit.isDirty ? " (with uncommitted changes)" : "")", "",
            "Command: `flowmeter-bench ingest\(arguments.isEmpty ? "" : " " + arguments.joined(separator: " "))` "
                + "(`make bench BENCH_ARGS=\"\(arguments.joined(separator: " "))\"`), "
                + "\(ISO8601DateFormatter().string(from: Date())).", "",
        ]
        lines += header.map { "- \($0)" } + [""]
        lines += [
            "Events per CPU-second of the collector process, median of rounds; ratio is the median of the "
                + "round-by-round ratios:", "",
        ]
        lines += summary.ratioTable.markdown + ["", "Goals (issue 15):", ""]
        lines += IngestSummary.verdictLines(verdicts).map { "- \($0)" } + [""]
        if !notes.isEmpty {
            lines +=
                notes.map { $0.hasPrefix("    ") ? "  - `\($0.trimmingCharacters(in: .whitespaces))`" : "- \($0)" } + [
                    ""
                ]
        }
        lines += [
            "Every target and cell (medians of rounds; RSS is the largest VmHWM; context switches are summed over "
                + "all the collector's threads, per request answered):", "",
        ]
        lines += summary.rowTable.markdown
        let url = URL(fileURLWithPath: path)
        try FileManager.default.createDirectory(
            at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: url)
    }

    /// The short commit of the working directory's checkout, and whether tracked files differ from it.
    static func commit() -> (short: String, isDirty: Bool) {
        let short = git(["rev-parse", "--short", "HEAD"])?.trimmingCharacters(in: .whitespacesAndNewlines)
        let status = git(["status", "--porcelain", "--untracked-files=no"]) ?? ""
        return (short.flatMap { $0.isEmpty ? nil : $0 } ?? "unknown", !status.isEmpty)
    }

    static func git(_ arguments: [String]) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["git"] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return nil }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return process.terminationStatus == 0 ? String(decoding: data, as: UTF8.self) : nil
    }

    /// The 1, 5 and 15 minute load averages from /proc/loadavg, as `uptime` prints them.
    static func loadAverage() -> String {
        guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return "unknown" }
        return text.split(separator: " ").prefix(3).joined(separator: ", ")
    }
}
