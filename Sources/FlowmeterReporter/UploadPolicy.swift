public import Foundation

/// Pacing, backoff and compression of uploads; the defaults follow docs/api.md#client-sdk.
public struct UploadPolicy: Sendable, Hashable {
    /// Seconds after start before the first upload (so app launch is not slowed by the network).
    public var initialDelay: TimeInterval = 5
    /// Seconds between two uploads while batches are queued.
    public var minimumInterval: TimeInterval = 5
    /// The first backoff cap after 408, 500, 502, 504 or no answer; it doubles per failure, with full jitter.
    public var initialBackoff: TimeInterval = 2
    /// The largest backoff cap.
    public var maximumBackoff: TimeInterval = 300
    /// The wait after 429 or 503 without a usable `Retry-After`.
    public var defaultRetryAfter: TimeInterval = 60
    /// The longest `Retry-After` honoured; a longer one is cut to this.
    public var maximumRetryAfter: TimeInterval = 3_600
    /// The jitter added to a wait for `Retry-After` (or its default), as a fraction of the wait: the SDK waits the
    /// server's `Retry-After` plus a uniform random part of up to this fraction of it, and of at least 1 s; so 60 s
    /// becomes 60–75 s and 5 s becomes 5–6 s. Never less than the server asked. 0 keeps the 1 s floor only.
    public var retryAfterJitter: Double = 0.25
    /// Seconds between checks while the upload conditions hold uploads back.
    public var conditionsRecheckInterval: TimeInterval = 60
    /// Compress bodies with gzip (`Content-Encoding: gzip`).
    public var usesGzip = true

    /// Creates the default policy.
    public init() {}
}
