import HTTPServer
import Metrics

/// `flowmeter_ingest_answers_total{key_id, status}`: every answer on the ingest route by the key that paid for it,
/// and the server's body budget (`flowmeter_http_body_bytes_in_flight`, `flowmeter_http_body_budget_rejections`).
///
/// Bounded in cardinality: `key_id` is one of the keys file's key ids, or `none` for requests without a known key;
/// `status` is a status the collector sends (or `none` when the connection closed without an answer). So at most
/// (keys + 1) × 12 series; a key id never comes from the client.
final class KeyAnswerMetrics: Sendable {
    private let answers: CounterFamily
    private let registry: MetricsRegistry

    init(registry: MetricsRegistry, keys: IngestKeys) {
        self.registry = registry
        answers = registry.counter(
            "flowmeter_ingest_answers_total",
            help: "Answers on POST /v1/diagnostics by ingest key id (none: no known key) and status.",
            labelNames: ["key_id", "status"], maxChildren: (keys.keys.count + 1) * 16)
    }

    /// Registers the server's body-budget gauges.
    func registerBodyBudget(server: HTTPServer) {
        registry.gauge(
            "flowmeter_http_body_bytes_in_flight",
            help: "Request-body bytes reserved by requests being received or handled."
        ) { [weak server] in Double(server?.statistics.bodyBytesInFlight ?? 0) }
        registry.gauge(
            "flowmeter_http_body_budget_rejections",
            help: "Requests answered 503 from their headers because the body budget was spent, since the start."
        ) { [weak server] in Double(server?.statistics.bodyBudgetRejections ?? 0) }
    }

    /// Counts one completed request when it was on the ingest route.
    func record(_ completion: HTTPRequestCompletion) {
        guard completion.client != nil || completion.path == "/v1/diagnostics" else { return }
        let status = completion.status.map { String($0.rawValue) } ?? "none"
        answers.labels(completion.client ?? "none", status).increment()
    }
}
