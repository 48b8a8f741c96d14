import FlowmeterModels
import Foundation
import Metrics
import Sink
import Synchronization

/// The standalone sink's `/metrics` (`flowmeter sink --ops-listen`): its totals, lag per partition, store errors
/// by kind, whether and why it is stalled, and how long its store transactions take. docs/metrics.md lists them.
///
/// Counters follow the sink's own totals, brought up to date at each scrape; the histogram is observed as each step
/// commits.
final class SinkMetrics: Sendable {
    /// The registry `/metrics` renders.
    let registry = MetricsRegistry()
    /// Seconds per committed store transaction (a partition's step).
    let commitSeconds: Histogram
    private let applied: Counter
    private let duplicates: Counter
    private let events: Counter
    private let badMessages: Counter
    private let refused: Counter
    private let deadLetters: Counter
    private let deploys: Counter
    private let manifests: Counter
    private let fenced: Counter
    private let steps: Counter
    private let stepPolls: Counter
    private let storeErrors: CounterFamily
    private let stalled: GaugeFamily
    private let partitionLag: GaugeFamily
    private let lagSeconds: Gauge
    private let stalledSince: Gauge
    private let seen = RunningTotals(RollupSinkCounters())

    /// The stable words of ``SinkStall/reason``, so every series exists from the first scrape.
    static let stallReasons = [
        "store_read_only", "store_permission_denied", "store_disk_full", "store_unreachable", "store_timed_out",
        "store_io_error", "store_corrupt", "store_busy", "store_error", "dead_letters_unwritable",
    ]

    init() {
        commitSeconds = registry.histogram(
            "flowmeter_sink_commit_seconds",
            help:
                "Seconds per store transaction that committed a step (rollups, dedupe keys, its partitions' offsets).",
            buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
        ).labels()
        applied = registry.counter(
            "flowmeter_sink_applied_total", help: "Batch records the sink counted into the store."
        ).labels()
        duplicates = registry.counter(
            "flowmeter_sink_duplicates_total",
            help: "Copies of batches counted before (dedupe hits), skipped."
        ).labels()
        events = registry.counter("flowmeter_sink_events_total", help: "Events of the counted batch records.").labels()
        badMessages = registry.counter(
            "flowmeter_sink_bad_messages_total", help: "Messages that failed to decode or validate, dead-lettered."
        ).labels()
        refused = registry.counter(
            "flowmeter_sink_refused_messages_total",
            help: "Messages whose own data the store refused (a constraint on that row), dead-lettered."
        ).labels()
        deadLetters = registry.counter(
            "flowmeter_sink_dead_letters_total", help: "Messages written to the dead-letter file."
        ).labels()
        deploys = registry.counter(
            "flowmeter_sink_deploys_total", help: "Deploy markers stored from the deploys topic."
        ).labels()
        manifests = registry.counter(
            "flowmeter_sink_manifests_total", help: "Capability manifests stored from the manifests topic."
        ).labels()
        fenced = registry.counter(
            "flowmeter_sink_fenced_steps_total",
            help: "Steps refused because another sink had moved the partition on (a rebalance)."
        ).labels()
        steps = registry.counter(
            "flowmeter_sink_steps_total", help: "Partition steps committed to the store (with records or freshness)."
        ).labels()
        stepPolls = registry.counter(
            "flowmeter_sink_step_polls_total",
            help:
                "Polls whose batch records were counted in a committed step; above flowmeter_sink_commit_seconds_count "
                + "while steps span polls (the sink is behind)."
        ).labels()
        storeErrors = registry.counter(
            "flowmeter_sink_store_errors_total",
            help: "Failed store attempts by kind (read_only, disk_full, connection, timeout, …; dead_letters: a "
                + "dead-letter write).", labelNames: ["kind"])
        stalled = registry.gauge(
            "flowmeter_sink_stalled",
            help: "1 for the reason the sink makes no progress now (the store fails as a whole, or dead letters "
                + "cannot be written); 0 otherwise.", labelNames: ["reason"])
        partitionLag = registry.gauge(
            "flowmeter_sink_partition_lag_records",
            help: "Records of a batches-topic partition not yet counted (high watermark minus the stored offset), "
                + "as of the partition's last step.", labelNames: ["partition"], maxChildren: 1024)
        lagSeconds = registry.gauge(
            "flowmeter_sink_lag_seconds",
            help: "Seconds between the newest counted record's Kafka timestamp and when it was counted."
        ).labels()
        stalledSince = registry.gauge(
            "flowmeter_sink_stalled_since_timestamp_seconds",
            help: "When the current stall began (Unix seconds); 0 while the sink makes progress."
        ).labels()
        registry.gauge(
            "flowmeter_build_info", help: "Always 1; the labels name the version and the process (sink).",
            labelNames: ["version", "collector"]
        ).labels(flowmeterVersion, "sink").set(1)
        for kind in SinkStall.kinds { _ = storeErrors.labels(kind) }
        for reason in Self.stallReasons { stalled.labels(reason).set(0) }
    }

    /// Brings every series up to `sink`'s state.
    func refresh(from sink: RollupSink) {
        let now = sink.counters
        let before = seen.advance(to: now)
        applied.advance(from: before.applied, to: now.applied)
        duplicates.advance(from: before.duplicates, to: now.duplicates)
        events.advance(from: before.events, to: now.events)
        badMessages.advance(from: before.badMessages, to: now.badMessages)
        refused.advance(from: before.refusedMessages, to: now.refusedMessages)
        deadLetters.advance(from: before.deadLetters, to: now.deadLetters)
        deploys.advance(from: before.deploys, to: now.deploys)
        manifests.advance(from: before.manifests, to: now.manifests)
        fenced.advance(from: before.fenced, to: now.fenced)
        steps.advance(from: before.batches, to: now.batches)
        stepPolls.advance(from: before.stepPolls, to: now.stepPolls)
        for (kind, count) in now.storeErrors {
            storeErrors.labels(kind).advance(from: before.storeErrors[kind] ?? 0, to: count)
        }
        lagSeconds.set(now.lagSeconds)
        let stall = sink.stall
        for reason in Self.stallReasons { stalled.labels(reason).set(stall?.reason == reason ? 1 : 0) }
        stalledSince.set(stall.map { $0.since.timeIntervalSince1970 } ?? 0)
        for (partition, progress) in sink.partitionProgress {
            partitionLag.labels(String(partition)).set(Double(progress.lag))
        }
    }
}
