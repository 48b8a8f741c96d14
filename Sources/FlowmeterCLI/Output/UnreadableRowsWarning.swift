import Collector
import RollupStore
import Synchronization

/// Turns the store's reports of rows it could not read into one warning per table per command, a log line and a
/// metric, so an answer that left rows out says so.
final class UnreadableRowsWarning: Sendable {
    private let warned = Mutex<Set<String>>([])
    private let sink: Sink
    private let metrics = Mutex<CollectorMetrics?>(nil)

    /// Where the warnings go.
    enum Sink: Sendable {
        /// A query's standard error: once per table for the whole command.
        case output(CommandOutput)
        /// A service's log: every report, with the metric.
        case logger(CollectorLogger)
    }

    init(_ sink: Sink) {
        self.sink = sink
    }

    /// Counts later reports in `flowmeter_store_unreadable_rows_total` too.
    func attach(_ metrics: CollectorMetrics) {
        self.metrics.withLock { $0 = metrics }
    }

    /// The store's handler.
    var handler: @Sendable (UnreadableRows) -> Void {
        { report in self.record(report) }
    }

    private func record(_ report: UnreadableRows) {
        metrics.withLock { $0 }?.recordUnreadableRows(table: report.table, count: report.count)
        switch sink {
        case .output(let output):
            guard warned.withLock({ $0.insert(report.table).inserted }) else { return }
            output.printError("warning: \(report); the answer leaves them out")
        case .logger(let logger):
            logger.warning(
                "store rows could not be read and were skipped",
                ["table": report.table, "rows": String(report.count), "first_problem": report.firstProblem])
        }
    }
}
