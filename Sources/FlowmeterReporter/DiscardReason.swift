/// Why the SDK dropped diagnostics before the collector took them: the reasons in docs/api.md#client-sdk, sent in the
/// next batch's `clientReport`.
public enum DiscardReason: String, CaseIterable, Hashable, Sendable, Codable {
    /// Storage was over its byte limit (or the in-memory write buffer over its own), so the oldest batches went.
    case queueOverflow = "queue_overflow"
    /// A batch stayed on disk longer than the storage age limit (7 days by default).
    case expired
    /// The collector refused a batch for good: 400, 401, 403 or another 4xx, or the batch file could not be read.
    case sendError = "send_error"
    /// A single event was larger than the collector takes (413 with nothing left to split).
    case payloadTooLarge = "payload_too_large"
    /// Storage overflowed while the collector's rate limit (429) held uploads back.
    case rateLimited = "rate_limited"
    /// A pre-aggregation cap cut the event: distinct keys per batch, or events per page decode.
    case capExceeded = "cap_exceeded"
    /// A stored line the SDK could not read back (damaged on disk): dropped, and the rest of its batch sent.
    case corrupt
}
