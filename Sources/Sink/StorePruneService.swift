public import FlowmeterModels
import Foundation
public import Lifecycle
public import RollupStore
import Synchronization

/// Retention as a service: prunes the store at start and then every interval (``RollupStoreMaintenance/prune``),
/// in bounded batches on a thread of its own; asked to shut down, it stops after the batch in progress.
///
/// A failed prune is logged and tried again at the next interval; rows it left are deleted then.
public struct StorePruneService: Service {
    public let name = "store-prune"
    /// The store it prunes.
    public let store: any RollupStoreMaintenance
    /// What it keeps.
    public let policy: RetentionPolicy
    /// Time between prunes.
    public let interval: Duration
    private let log: RollupSink.Log
    private let clock: @Sendable () -> Timestamp

    /// A service that prunes `store` by `policy` every `interval` (positive), logging through `log`; `clock` is the
    /// system clock unless given.
    public init(
        store: any RollupStoreMaintenance, policy: RetentionPolicy, every interval: Duration,
        log: @escaping RollupSink.Log = { _, _, _ in }, clock: (@Sendable () -> Timestamp)? = nil
    ) {
        self.store = store
        self.policy = policy
        self.interval = interval
        self.log = log
        self.clock = clock ?? { Timestamp(Date()) }
    }

    public func run() async throws {
        let isCancelled = CancelFlag()
        await withTaskGroup(of: Void.self) { group in
            // Shutdown (graceful or cancellation) stops the prune in progress after its batch.
            group.addTask {
                await waitForShutdown()
                isCancelled.set()
            }
            while !isShuttingDown {
                await pruneOnce(isCancelled: isCancelled)
                guard await sleepUnlessShuttingDown(for: interval) else { break }
            }
            group.cancelAll()
        }
    }

    /// One prune, off the cooperative pool; logs what it deleted (or why it failed).
    private func pruneOnce(isCancelled: CancelFlag) async {
        let (store, policy, now) = (store, policy, clock())
        let outcome = await onThread(named: "store-prune") { () -> Result<PruneReport, any Error> in
            Result {
                try store.prune(policy, now: now, shouldContinue: { !isCancelled.isSet })
            }
        }
        switch outcome {
        case .success(let report):
            guard report.deletedRows > 0 || !report.isComplete else { return }
            var fields = [
                "minute_rows": String(report.minuteRows), "hour_rows": String(report.hourRows),
                "applied_ids": String(report.appliedIDs), "batches": String(report.batches),
                "minutes_before": report.minutesBefore.rfc3339String, "hours_before": report.hoursBefore.rfc3339String,
                "complete": String(report.isComplete),
            ]
            if let pages = report.reclaimedPages { fields["reclaimed_pages"] = String(pages) }
            log(.info, "store pruned", fields)
        case .failure(let error):
            log(.error, "store prune failed; trying again at the next interval", ["error": String(describing: error)])
        }
    }
}

/// Set once when the service is cancelled; read by the prune between batches.
private final class CancelFlag: Sendable {
    private let flag = Atomic<Bool>(false)

    var isSet: Bool { flag.load(ordering: .acquiring) }

    func set() { flag.store(true, ordering: .releasing) }
}
