import FlowmeterModels
import FlowmeterWire
import HTTPServer
import Kafka
public import Metrics
import Rollups
import Synchronization

/// The collector's Prometheus metrics, registered once; docs/metrics.md lists every family exactly.
///
/// Label values from clients (app IDs, kinds, widget types) pass through `LabelLimiter`s, so a flood of random
/// strings adds a bounded number of series. Handles for fixed label sets are resolved once here.
public final class CollectorMetrics: Sendable {
    /// The registry `/metrics` renders.
    public let registry: MetricsRegistry

    let requests: CounterFamily
    let requestDuration: HistogramFamily
    let events: CounterFamily
    let diagnosticEvents: CounterFamily
    let batches: CounterFamily
    /// `flowmeter_batches_total`'s children, resolved once: one is counted on every request.
    let acceptedBatches: Counter
    /// Times the producer was told to send without waiting out `linger.ms` (``CollectorConfiguration/LingerMode``).
    let lingerCutShort: Counter
    let rejectedBatches: Counter
    let unavailableBatches: Counter
    let duplicateBatches: Counter
    let rejections: CounterFamily
    let rateLimited: CounterFamily
    let decodes: CounterFamily
    let cleanBatches: CounterFamily
    let clientDiscarded: CounterFamily
    let deliveryLatency: Histogram
    let delivered: Counter
    let deliveryErrors: CounterFamily
    let rebuilds: Counter
    let deployMarkers: CounterFamily
    let manifestUploads: CounterFamily
    let sinkApplied: Counter
    let sinkDuplicates: Counter
    let sinkBadMessages: Counter
    let sinkDeploys: Counter
    let sinkDeadLetters: Counter
    let storeUnreadableRows: CounterFamily
    let spoolAppended: Counter
    let spoolReplayed: Counter
    let spoolDropped: CounterFamily
    let spoolRequeued: CounterFamily
    let spoolWriteErrors: Counter
    let spoolReadErrors: Counter
    let spoolDeadLettered: Counter
    let spoolRefused: CounterFamily
    /// Resolved `flowmeter_diagnostic_events_total` children by raw app and build, then raw kind and widget type.
    private let diagnosticSeries = Mutex<[DiagnosticAppKey: [DiagnosticTypeKey: Counter]]>([:])
    /// `flowmeter_events_total`'s accepted and unavailable children per kind label, resolved once: the label set is
    /// bounded by ``kindLimiter`` (32 kinds and `__other__`), so this holds at most 33 pairs.
    private let kindOutcomes = Mutex<[String: KindOutcomeCounters]>([:])
    private let rebuildsSeen = RunningTotals<UInt64>(0)
    private let sinkSeen = RunningTotals(SinkCounters())
    private let sinkSource = Mutex<(@Sendable () -> SinkCounters)?>(nil)

    /// Running totals of an in-process rollup sink (`flowmeter serve --store`), exported as `flowmeter_sink_*`.
    public struct SinkCounters: Sendable, Hashable {
        /// Partial rollups merged into the store.
        public var applied: UInt64 = 0
        /// Partial rollups skipped because their id was applied before.
        public var duplicates: UInt64 = 0
        /// Messages that were not valid partial rollups or deploy markers, skipped.
        public var badMessages: UInt64 = 0
        /// Deploy markers stored from `flowmeter.deploys.v1`.
        public var deploys: UInt64 = 0
        /// Messages written to the dead-letter file (bad ones and ones the store refused).
        public var deadLetters: UInt64 = 0

        /// Totals of zero, or the given ones.
        public init(
            applied: UInt64 = 0, duplicates: UInt64 = 0, badMessages: UInt64 = 0, deploys: UInt64 = 0,
            deadLetters: UInt64 = 0
        ) {
            self.applied = applied
            self.duplicates = duplicates
            self.badMessages = badMessages
            self.deploys = deploys
            self.deadLetters = deadLetters
        }
    }

    /// App IDs in labels: the first 200 seen.
    let appLimiter = LabelLimiter(maxValuesPerKind: 200, maxKinds: 1)
    /// Kinds in labels: the first 32 seen (the four named kinds and newer clients' ones).
    let kindLimiter = LabelLimiter(maxValuesPerKind: 32, maxKinds: 1)
    /// Widget types in labels: the first N per app and kind.
    let widgetTypeLimiter: LabelLimiter

    /// Registers every family; `typeCap` widget types per app and kind keep their own series.
    public init(typeCap: Int, registry: MetricsRegistry = MetricsRegistry()) {
        self.registry = registry
        widgetTypeLimiter = LabelLimiter(maxValuesPerKind: typeCap, maxKinds: 1_024)
        requests = registry.counter(
            "flowmeter_http_requests_total", help: "HTTP requests by matched route, method and status.",
            labelNames: ["route", "method", "status"])
        requestDuration = registry.histogram(
            "flowmeter_http_request_duration_seconds",
            help: "Time from request headers to the end of the response, by route.", labelNames: ["route"],
            buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10])
        events = registry.counter(
            "flowmeter_events_total", help: "Events received in decoded batches, by kind and outcome.",
            labelNames: ["kind", "outcome"])
        diagnosticEvents = registry.counter(
            "flowmeter_diagnostic_events_total",
            help: "Occurrences (event count field) of accepted diagnostics by app, kind, widget type and build.",
            labelNames: ["app", "kind", "widget_type", "build_configuration"], maxChildren: 20_000)
        batches = registry.counter(
            "flowmeter_batches_total", help: "Ingest requests by outcome.", labelNames: ["outcome"])
        acceptedBatches = batches.labels("accepted")
        rejectedBatches = batches.labels("rejected")
        unavailableBatches = batches.labels("unavailable")
        duplicateBatches = batches.labels("duplicate")
        lingerCutShort = registry.counter(
            "flowmeter_kafka_linger_cut_short_total",
            help: "Times the producer sent without waiting out linger.ms, every connection waiting for its 202."
        ).labels()
        rejections = registry.counter(
            "flowmeter_rejections_total", help: "Ingest requests answered with an error, by reason.",
            labelNames: ["reason"])
        rateLimited = registry.counter(
            "flowmeter_rate_limited_requests_total", help: "Requests answered 429, by ingest key id.",
            labelNames: ["key_id"])
        decodes = registry.counter(
            "flowmeter_decodes_total", help: "Page decodes the apps reported (the batches' decodes field), by app.",
            labelNames: ["app"])
        cleanBatches = registry.counter(
            "flowmeter_decode_clean_batches_total", help: "Accepted batches that carried no diagnostics, by app.",
            labelNames: ["app"])
        clientDiscarded = registry.counter(
            "flowmeter_client_discarded_events_total",
            help: "Events apps' SDKs dropped on the device before sending (batches' clientReport), by app and reason.",
            labelNames: ["app_id", "reason"])
        deliveryLatency = registry.histogram(
            "flowmeter_kafka_delivery_latency_seconds", help: "Time from enqueue to the delivery report.",
            buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]
        ).labels()
        delivered = registry.counter(
            "flowmeter_kafka_delivered_total", help: "Messages whose delivery report said persisted."
        ).labels()
        deliveryErrors = registry.counter(
            "flowmeter_kafka_delivery_errors_total", help: "Messages whose delivery report was a failure, by error.",
            labelNames: ["error"], maxChildren: 100)
        rebuilds = registry.counter(
            "flowmeter_kafka_producer_rebuilds_total",
            help: "Times a fatal librdkafka error made the producer replace its handle."
        ).labels()
        deployMarkers = registry.counter(
            "flowmeter_deploy_markers_total", help: "POST /v1/deploys requests by outcome.", labelNames: ["outcome"])
        manifestUploads = registry.counter(
            "flowmeter_manifest_uploads_total", help: "POST /v1/manifests requests by outcome.",
            labelNames: ["outcome"])
        sinkApplied = registry.counter(
            "flowmeter_sink_applied_total", help: "Partial rollups the in-process sink merged into the store."
        ).labels()
        sinkDuplicates = registry.counter(
            "flowmeter_sink_duplicates_total",
            help: "Partial rollups the in-process sink skipped because their id was applied before."
        ).labels()
        sinkBadMessages = registry.counter(
            "flowmeter_sink_bad_messages_total",
            help: "Messages the in-process sink could not decode, counted and skipped."
        ).labels()
        sinkDeploys = registry.counter(
            "flowmeter_sink_deploys_total", help: "Deploy markers the in-process sink stored from the deploys topic."
        ).labels()
        sinkDeadLetters = registry.counter(
            "flowmeter_sink_dead_letters_total",
            help: "Messages the in-process sink wrote to its dead-letter file (undecodable or refused by the store)."
        ).labels()
        storeUnreadableRows = registry.counter(
            "flowmeter_store_unreadable_rows_total",
            help: "Stored rows a read skipped (or a merge replaced) because they did not decode, by table.",
            labelNames: ["table"], maxChildren: 20)
        spoolAppended = registry.counter(
            "flowmeter_spool_appended_records_total",
            help: "Kafka messages written to the disk spool (and synced) because Kafka could not take them in time."
        ).labels()
        spoolReplayed = registry.counter(
            "flowmeter_spool_replayed_records_total",
            help: "Spooled messages whose delivery report said persisted: delivered from the spool."
        ).labels()
        spoolDropped = registry.counter(
            "flowmeter_spool_dropped_records_total",
            help: "Spooled records given up, by reason: torn, corrupt, undeliverable.",
            labelNames: ["reason"], maxChildren: 10)
        spoolRequeued = registry.counter(
            "flowmeter_spool_requeued_messages_total",
            help: "Failed delivery reports of spooled messages, each sent again, by outcome.",
            labelNames: ["outcome"], maxChildren: 10)
        spoolWriteErrors = registry.counter(
            "flowmeter_spool_write_errors_total",
            help: "Writes or syncs of the disk spool that failed (full disk, read-only file system, I/O error)."
        ).labels()
        spoolReadErrors = registry.counter(
            "flowmeter_spool_read_errors_total",
            help: "Reads of the disk spool that failed (EACCES, EIO, EMFILE); each retried with backoff, none dropped."
        ).labels()
        spoolDeadLettered = registry.counter(
            "flowmeter_spool_dead_lettered_records_total",
            help: "Spooled records Kafka refused for good, moved to the spool's dead-letter segment for the operator."
        ).labels()
        spoolRefused = registry.counter(
            "flowmeter_spool_refused_batches_total",
            help: "Batches the disk spool could not take, by reason: full (--spool-max-bytes), write_failed.",
            labelNames: ["reason"], maxChildren: 10)
        for reason in ["full", "write_failed"] { _ = spoolRefused.labels(reason) }
        for reason in ["torn", "corrupt", "undeliverable"] { _ = spoolDropped.labels(reason) }
        for outcome in ["timed_out_requeued", "failed_requeued"] { _ = spoolRequeued.labels(outcome) }
    }

    /// Counts a failed delivery report of a spooled message that is sent again: `timed_out_requeued` for
    /// `message.timeout.ms` passing, else `failed_requeued`.
    func countRequeue(_ error: KafkaError?) {
        spoolRequeued.labels(error?.code == .messageTimedOut ? "timed_out_requeued" : "failed_requeued").increment()
    }

    /// Registers the disk spool's gauges, read at scrape time; without a spool they read 0 (and writable 1).
    func registerSpoolGauges(_ spool: Spool?) {
        registry.gauge("flowmeter_spool_bytes", help: "Bytes of disk-spool segment files.") {
            Double(spool?.status.bytes ?? 0)
        }
        registry.gauge("flowmeter_spool_max_bytes", help: "The disk spool's bound (--spool-max-bytes); 0 without one.")
        {
            Double(spool?.configuration.maxBytes ?? 0)
        }
        registry.gauge("flowmeter_spool_segments", help: "Disk-spool segment files.") {
            Double(spool?.status.segments ?? 0)
        }
        registry.gauge(
            "flowmeter_spool_records", help: "Spooled messages not yet persisted by Kafka (or dropped)."
        ) { Double(spool?.status.records ?? 0) }
        registry.gauge(
            "flowmeter_spool_oldest_record_age_seconds",
            help: "Age of the oldest segment that still holds messages Kafka has not persisted; 0 when none."
        ) {
            guard let oldest = spool?.status.oldestAppendedAt else { return 0 }
            return max(0, Double(SpoolBatch.now() - oldest) / 1000)
        }
        registry.gauge(
            "flowmeter_spool_writable",
            help: "1 while the disk spool can take batches; 0 while it is full or its last write failed."
        ) {
            guard let status = spool?.status else { return 1 }
            return status.isFull || status.failure != nil ? 0 : 1
        }
    }

    /// Counts stored rows that a read of the process's store skipped because they did not decode.
    public func recordUnreadableRows(table: String, count: Int) {
        storeUnreadableRows.labels(table).increment(by: UInt64(max(0, count)))
    }

    /// Exports the totals `read` returns (an in-process sink's) as the `flowmeter_sink_*` counters at each scrape.
    public func attachSink(_ read: @escaping @Sendable () -> SinkCounters) {
        sinkSource.withLock { $0 = read }
    }

    /// Registers the gauges read at scrape time from the server, the producer and readiness.
    func registerGauges(
        server: HTTPServer, producer: KafkaProducer?, isKafkaUp: @escaping @Sendable () -> Bool,
        version: String, collectorID: String
    ) {
        // Weakly: the server and the producer hold these metrics (request and delivery callbacks), and a strong
        // reference back would keep a collector's whole graph alive after it is gone.
        registry.gauge("flowmeter_http_requests_in_flight", help: "Requests received and not yet answered.") {
            [weak server] in Double(server?.statistics.inFlightRequests ?? 0)
        }
        registry.gauge(
            "flowmeter_http_requests_suspended", help: "Requests waiting for Kafka with their connection suspended."
        ) { [weak server] in Double(server?.statistics.suspendedRequests ?? 0) }
        registry.gauge("flowmeter_http_connections_open", help: "Open HTTP connections.") {
            [weak server] in Double(server?.statistics.openConnections ?? 0)
        }
        registry.gauge(
            "flowmeter_kafka_queue_depth", help: "Messages on the producer's queue, in flight or awaiting a report."
        ) { [weak producer] in Double(producer?.counters.queueDepth ?? 0) }
        registry.gauge("flowmeter_kafka_up", help: "1 while Kafka answers (or in --kafka none mode), else 0.") {
            isKafkaUp() ? 1 : 0
        }
        registry.gauge(
            "flowmeter_build_info", help: "Always 1; the labels name the version and this collector.",
            labelNames: ["version", "collector"]
        ).labels(version, collectorID).set(1)
    }

    /// Brings counters that the producer keeps itself up to date; call before rendering.
    func refresh(producer: KafkaProducer?) {
        if let read = sinkSource.withLock({ $0 }) {
            let now = read()
            let before = sinkSeen.advance(to: now)
            sinkApplied.advance(from: before.applied, to: now.applied)
            sinkDuplicates.advance(from: before.duplicates, to: now.duplicates)
            sinkBadMessages.advance(from: before.badMessages, to: now.badMessages)
            sinkDeploys.advance(from: before.deploys, to: now.deploys)
            sinkDeadLetters.advance(from: before.deadLetters, to: now.deadLetters)
        }
        guard let producer else { return }
        let total = producer.counters.rebuilds
        rebuilds.advance(from: rebuildsSeen.advance(to: total), to: total)
    }

    /// Records one delivery report; runs on the producer's poll thread.
    func recordDelivery(_ report: KafkaDeliveryReport) {
        deliveryLatency.observe(nanoseconds: report.latencyNanoseconds)
        if let error = report.error {
            deliveryErrors.labels(error.code.description).increment()
        } else {
            delivered.increment()
        }
    }

    /// Records a finished HTTP request.
    func recordRequest(_ completion: HTTPRequestCompletion) {
        let route = completion.route ?? "unmatched"
        let status = completion.status.map { String($0.rawValue) } ?? "none"
        let method = Self.knownMethods.contains(completion.method.rawValue) ? completion.method.rawValue : "OTHER"
        requests.labels(route, method, status).increment()
        requestDuration.labels(route).observe(completion.duration)
    }

    // Clients choose the method string; only these get their own series.
    private static let knownMethods: Set<String> = [
        "GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE",
    ]

    /// Counts accepted events' occurrences in `flowmeter_diagnostic_events_total`.
    ///
    /// Every raw (app, build, kind, widget type) resolves its labels and child once and is then cached: limiter
    /// admission is first come, forever, so a cached child is what resolving again would give. A batch takes one
    /// lock and does one lookup per event. The cache is emptied when it grows past `maxCachedSeries` (a flood of
    /// random types), which costs only re-resolution.
    func recordDiagnostics(_ events: EventTable, appID: String, build: BuildConfiguration) {
        guard !events.isEmpty else { return }
        diagnosticSeries.withLock { cache in
            if cache.count > Self.maxCachedApps { cache.removeAll() }
            let appKey = DiagnosticAppKey(appID: appID, build: build)
            count(events, appID: appID, build: build, into: &cache[appKey, default: [:]])
        }
    }

    private func count(
        _ table: EventTable, appID: String, build: BuildConfiguration,
        into series: inout [DiagnosticTypeKey: Counter]
    ) {
        var app: String?
        let events = table.events
        for position in events.indices {
            let event = events[position]
            let typeKey = DiagnosticTypeKey(kind: table.kind(of: event), widgetType: table.string(event.widgetType))
            let occurrences = UInt64(event.count)
            if let counter = series[typeKey] {
                counter.increment(by: occurrences)
                continue
            }
            resolve(typeKey, appID: appID, build: build, app: &app, into: &series).increment(by: occurrences)
        }
    }

    /// Resolves and caches the child for `typeKey`; `app` is the app's label once one resolution made it.
    private func resolve(
        _ typeKey: DiagnosticTypeKey, appID: String, build: BuildConfiguration, app: inout String?,
        into series: inout [DiagnosticTypeKey: Counter]
    ) -> Counter {
        if series.count > Self.maxCachedSeries { series.removeAll() }
        let appLabel = app ?? appLabel(appID)
        app = appLabel
        let kind = kindLabel(typeKey.kind)
        let type = widgetTypeLabel(typeKey.widgetType, app: appLabel, kind: kind)
        let counter = diagnosticEvents.labels(appLabel, kind, type, build.rawValue)
        series[typeKey] = counter
        return counter
    }

    /// A raw app and build configuration, the outer key of the diagnostic-series cache.
    private struct DiagnosticAppKey: Hashable {
        var appID: String
        var build: BuildConfiguration
    }

    /// A raw kind and widget type, the inner key of the diagnostic-series cache.
    private struct DiagnosticTypeKey: Hashable {
        var kind: DiagnosticKind
        var widgetType: String?
    }

    private static let maxCachedApps = 1_024
    private static let maxCachedSeries = 4_096

    /// The reasons of docs/api.md#client-sdk; any other reason a client sends is counted as `other`.
    static let discardReasons: Set<String> = [
        "queue_overflow", "expired", "send_error", "payload_too_large", "rate_limited", "cap_exceeded", "corrupt",
    ]

    /// Counts a durable batch's `clientReport` in `flowmeter_client_discarded_events_total`.
    func recordClientReport(_ report: ClientReport?, appID: String) {
        guard let report else { return }
        let app = appLabel(appID)
        for entry in report.discarded where entry.events > 0 {
            let reason = Self.discardReasons.contains(entry.reason) ? entry.reason : "other"
            clientDiscarded.labels(app, reason).increment(by: UInt64(entry.events))
        }
    }

    /// The label for a client's kind: itself for the first kinds seen, `__other__` after.
    func kindLabel(_ kind: DiagnosticKind) -> String {
        kindLimiter.admit(kind.rawValue)
    }

    /// The `flowmeter_events_total` children a batch's events of `kind` end in (accepted or unavailable), resolved
    /// once per kind label, so answering a batch increments counters without looking labels up.
    func outcomeCounters(kind: DiagnosticKind) -> KindOutcomeCounters {
        let label = kindLabel(kind)
        if let counters = kindOutcomes.withLock({ $0[label] }) { return counters }
        let made = KindOutcomeCounters(
            accepted: events.labels(label, "accepted"), unavailable: events.labels(label, "unavailable"))
        kindOutcomes.withLock { $0[label] = made }
        return made
    }

    /// The label for an app ID: itself for the first apps seen, `__other__` after.
    func appLabel(_ appID: String) -> String {
        appLimiter.admit(appID)
    }

    /// The label for a widget type of `app` and `kind` (already labels); `none` when the event has no type.
    func widgetTypeLabel(_ widgetType: String?, app: String, kind: String) -> String {
        guard let widgetType else { return "none" }
        return widgetTypeLimiter.admit(widgetType, kind: app + "\u{1F}" + kind)
    }
}

/// One kind label's `flowmeter_events_total` children for the two outcomes an accepted batch can end in.
struct KindOutcomeCounters: Sendable {
    let accepted: Counter
    let unavailable: Counter
}
