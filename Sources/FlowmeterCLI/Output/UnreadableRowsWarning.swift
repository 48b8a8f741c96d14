import RollupStore
import Synchronization

/// Turns the store's reports of rows it could not read into one warning per table per command on standard error,
/// so an answer that left rows out says so. (Services log them instead: FlowmeterRuntime's store log.)
final class UnreadableRowsWarning: Sendable {
    private let warned = Mutex<Set<String>>([])
    private let output: CommandOutput

    init(_ output: CommandOutput) {
        self.output = output
    }

    /// The store's handler.
    var handler: @Sendable (UnreadableRows) -> Void {
        { report in self.record(report) }
    }

    private func record(_ report: UnreadableRows) {
        guard warned.withLock({ $0.insert(report.table).inserted }) else { return }
        output.printError("warning: \(Terminal.printable(report.description)); the answer leaves them out")
    }
}
