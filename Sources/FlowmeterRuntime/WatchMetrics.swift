import Foundation
import Metrics
import RollupStore
import Synchronization

/// `flowmeter watch`'s `/metrics` and `/readyz` (`--ops-listen`): how its passes go, and whether the last one could
/// read the store.
///
/// Not ready while the last pass failed on a store error (the reason names it); ready again after a pass succeeds.
final class WatchMetrics: Sendable {
    /// The registry `/metrics` renders.
    let registry = MetricsRegistry()
    private let passes: CounterFamily
    private let passSeconds: Histogram
    private let lastSuccess: Gauge
    private let failure = Mutex<(reason: String, message: String)?>(nil)

    init() {
        passes = registry.counter(
            "flowmeter_watch_passes_total", help: "Detector passes, by outcome (ok, failed).",
            labelNames: ["outcome"])
        passSeconds = registry.histogram(
            "flowmeter_watch_pass_seconds", help: "Seconds per detector pass.",
            buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]
        ).labels()
        lastSuccess = registry.gauge(
            "flowmeter_watch_last_success_timestamp_seconds",
            help: "When the last detector pass succeeded (Unix seconds); 0 before the first."
        ).labels()
        _ = passes.labels("ok")
        _ = passes.labels("failed")
    }

    /// Records one pass's outcome and duration.
    func record(_ error: (any Error)?, took duration: Duration) {
        passSeconds.observe(duration)
        guard let error else {
            passes.labels("ok").increment()
            lastSuccess.set(Date().timeIntervalSince1970)
            failure.withLock { $0 = nil }
            return
        }
        passes.labels("failed").increment()
        let reason: String
        if let error = error as? RollupStoreError {
            reason = error.isStoreWide ? "store_unavailable" : "store_error"
        } else {
            reason = "pass_failed"
        }
        let message =
            "The last detector pass failed: \((error as? RollupStoreError)?.message ?? String(describing: error))"
        failure.withLock { $0 = (reason, message) }
    }

    /// Why `watch` is not ready now, or nil.
    var readiness: (reason: String, message: String)? { failure.withLock { $0 } }
}
