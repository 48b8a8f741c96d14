/// What one upload attempt did, for ``ReporterConfiguration/onUpload``; it carries no key and no install id.
public struct UploadAttempt: Sendable, Hashable {
    /// What the reporter does with the batch after the answer.
    public enum Result: Sendable, Hashable {
        /// 202: the batch is done and deleted. `accepted` and `dropped` are the collector's counts.
        case delivered(accepted: Int, dropped: Int)
        /// Kept, tried again no earlier than `after` seconds from now (`Retry-After` or backoff).
        case retry(after: Double)
        /// Split into two halves that are sent instead (413).
        case split
        /// Dropped for good, counted under `reason` in the next `clientReport`.
        case dropped(reason: DiscardReason)
        /// Dropped (401 or 403), and uploads are paused for the rest of the process.
        case paused
    }

    /// The batch id, the same on every attempt of a batch.
    public var batchID: String
    /// The HTTP status, or nil when no answer arrived.
    public var status: Int?
    /// Events in the batch after pre-aggregation.
    public var events: Int
    /// Occurrences: the sum of the events' `count`.
    public var occurrences: Int
    /// Bytes of the body as sent (compressed when gzip is on).
    public var bodyBytes: Int
    /// What happens next.
    public var result: Result
}
