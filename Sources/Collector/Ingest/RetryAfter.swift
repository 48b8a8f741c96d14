/// The `Retry-After` values of the collector's 503 and 429 answers, spread so that clients told to come back do
/// not all come back in the same second (a herd that meets the same full spool or the same spent bucket again).
///
/// - 503 `unavailable` (Kafka and the spool cannot take the batch, the deadline passed, the body budget is spent):
///   a whole number of seconds drawn uniformly from ``unavailableSeconds``, 3–8 s.
/// - 429 `rate_limited`: the key's bucket's own wait (whole seconds, at least 1) plus 0–2 s drawn uniformly, so a
///   client never comes back before its bucket has the tokens.
///
/// docs/api.md#ingest asks only that both answers set `Retry-After`; the SDK adds its own jitter on top (docs/reporter.md).
enum RetryAfter {
    /// The range of a 503's `Retry-After`, in seconds.
    static let unavailableSeconds = 3...8
    /// The range of the seconds a 429 adds to its bucket's wait.
    static let rateLimitedExtraSeconds = 0...2

    /// A 503's `Retry-After` value.
    static func unavailable() -> String {
        String(Int.random(in: unavailableSeconds))
    }

    /// A 429's `Retry-After` value for a bucket that has its tokens again in `seconds`.
    static func rateLimited(_ seconds: Int) -> String {
        String(max(1, seconds) + Int.random(in: rateLimitedExtraSeconds))
    }
}
