import Collector
import Logging
import RollupStore
import Synchronization

/// A service's view of rows its store could not read: every report is logged and, once the collector exists,
/// counted in `flowmeter_store_unreadable_rows_total`.
final class StoreLog: Sendable {
    private let logger: Logger
    private let metrics = Mutex<CollectorMetrics?>(nil)

    init(_ logger: Logger) {
        self.logger = logger
    }

    /// Counts later reports in the collector's metrics too.
    func attach(_ metrics: CollectorMetrics) {
        self.metrics.withLock { $0 = metrics }
    }

    /// Store options that report to this log.
    var options: RollupStoreOptions {
        var options = RollupStoreOptions()
        options.onUnreadableRows = { report in self.record(report) }
        return options
    }

    private func record(_ report: UnreadableRows) {
        metrics.withLock { $0 }?.recordUnreadableRows(table: report.table, count: report.count)
        logger.warning(
            "store rows could not be read and were skipped",
            ["table": report.table, "rows": String(report.count), "first_problem": report.firstProblem])
    }
}
