/// How a ``FlowmeterReporter/flush(timeout:)`` ended.
public enum FlushOutcome: Hashable, Sendable {
    /// Everything queued when the flush began was sent and answered 202.
    case delivered
    /// Nothing is left of what was queued, but part of it was dropped instead of delivered: refused by the collector
    /// for good (4xx, or one event too large for it), or dropped by the storage limits. Those events are counted in
    /// the next batch's `clientReport`.
    case dropped
    /// The timeout passed with batches still queued: waiting for `Retry-After` or a backoff, in flight, or held
    /// back by the upload conditions. They stay on disk and go out later.
    case timedOut
    /// A 401 or 403 paused uploads for the rest of this process; what is queued stays on disk for the next one.
    case uploadsPaused
    /// The reporter was closed before the flush could finish.
    case closed
}
