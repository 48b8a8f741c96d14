/// The `outcome` label of `flowmeter_events_total` (docs/metrics.md): what became of an event the collector received.
enum EventOutcome: String, Sendable, Hashable {
    /// In a batch answered 202.
    case accepted
    /// In a batch answered 503 (Kafka and the spool did not take it, its deadline passed, or its retry is in
    /// flight).
    case unavailable
    /// In a retried batch answered from memory, not published again.
    case duplicate
    /// An event that did not decode, dropped from its batch.
    case droppedMalformed = "dropped_malformed"
    /// Older than `--max-event-age` after skew correction.
    case droppedTooOld = "dropped_too_old"
    /// More than `--max-future-skew` ahead after skew correction.
    case droppedFuture = "dropped_future"
    /// In a batch whose key may not write its app (403).
    case rejectedForbidden = "rejected_forbidden"
    /// In a batch whose key's bucket could not pay for it (429).
    case rejectedRateLimited = "rejected_rate_limited"
}
