import Synchronization

/// A token bucket: `burst` tokens at most, refilled at `perSecond` tokens a second.
///
/// Flowmeter's tokens are events (docs/api.md#keys-file's `eventsPerSecond`): a batch costs its event count, and at
/// least one, so empty batches are limited too. A batch larger than the whole burst is charged the burst, so it passes
/// once the bucket is full rather than never. A value type; `RateLimiter` shares buckets between threads.
public struct TokenBucket: Sendable {
    /// A bucket's size and refill rate.
    public struct Limit: Sendable, Hashable {
        /// Tokens (events) added per second.
        public var perSecond: Double
        /// The most tokens the bucket holds, that is the largest burst taken at once.
        public var burst: Double

        /// A limit of `perSecond` tokens a second with bursts of up to `burst`; both must be positive.
        public init(perSecond: Double, burst: Double) {
            precondition(perSecond > 0 && perSecond.isFinite, "perSecond must be positive and finite")
            precondition(burst >= 1 && burst.isFinite, "burst must be at least 1 and finite")
            self.perSecond = perSecond
            self.burst = burst
        }

        /// The default per ingest key: 1,000 events a second, bursts of 5,000 (100 full batches of 50).
        public static let defaultIngest = Limit(perSecond: 1_000, burst: 5_000)
    }

    /// Whether a take succeeded.
    public enum Decision: Sendable, Hashable {
        /// The tokens were taken.
        case allowed
        /// Not enough tokens; try again after this many whole seconds (at least 1), for `Retry-After`.
        case limited(retryAfterSeconds: Int)
    }

    /// The bucket's size and rate.
    public let limit: Limit
    private var tokens: Double
    private var updatedAt: ContinuousClock.Instant

    /// A full bucket as of `now`.
    public init(limit: Limit, now: ContinuousClock.Instant) {
        self.limit = limit
        tokens = limit.burst
        updatedAt = now
    }

    /// Takes `count` tokens (at least 1, at most the burst) if the bucket holds them at `now`.
    public mutating func tryTake(_ count: Int, now: ContinuousClock.Instant) -> Decision {
        refill(now: now)
        let cost = min(max(Double(count), 1), limit.burst)
        if cost <= tokens {
            tokens -= cost
            return .allowed
        }
        let wait = (cost - tokens) / limit.perSecond
        return .limited(retryAfterSeconds: max(1, Int(wait.rounded(.up))))
    }

    /// Takes `count` tokens (at least 1, at most the burst) whether or not the bucket holds them: the charge for work
    /// already done, such as a body decoded only to be refused. The bucket may go into debt, down to minus the burst,
    /// and admits nothing until it has refilled past 1; so one key's refused requests cost it what accepted events
    /// would, and a key in debt waits at most two bursts' worth of refill.
    public mutating func charge(_ count: Int, now: ContinuousClock.Instant) {
        refill(now: now)
        let cost = min(max(Double(count), 1), limit.burst)
        tokens = max(-limit.burst, tokens - cost)
    }

    /// The tokens available at `now`.
    public mutating func available(now: ContinuousClock.Instant) -> Double {
        refill(now: now)
        return tokens
    }

    private mutating func refill(now: ContinuousClock.Instant) {
        // A clock that steps backwards (it should not) must not mint tokens.
        guard now > updatedAt else { return }
        let (seconds, attoseconds) = (now - updatedAt).components
        let elapsed = Double(seconds) + Double(attoseconds) * 1e-18
        tokens = min(limit.burst, tokens + elapsed * limit.perSecond)
        updatedAt = now
    }
}

/// One token bucket per ingest key, shared by every request thread.
///
/// Buckets are created full on a key's first request, with the key's own limit or the default. The map grows
/// only with the keys in the keys file, since callers pass a key id after authentication. One lock per call.
public final class RateLimiter: Sendable {
    /// The limit for keys without their own.
    public let defaultLimit: TokenBucket.Limit
    private let clock: @Sendable () -> ContinuousClock.Instant
    private let buckets = Mutex<[String: TokenBucket]>([:])

    /// A limiter using `defaultLimit` for keys without their own, reading time from `clock` (injectable for tests).
    public init(
        defaultLimit: TokenBucket.Limit = .defaultIngest,
        clock: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }
    ) {
        self.defaultLimit = defaultLimit
        self.clock = clock
    }

    /// Whether `keyID`'s bucket holds at least one token, without taking any: the cheap check made before a body is
    /// decoded, so a key whose limit is spent costs no decoding.
    public func check(keyID: String, limit: TokenBucket.Limit? = nil) -> TokenBucket.Decision {
        withBucket(keyID: keyID, limit: limit) { bucket, now in
            let available = bucket.available(now: now)
            guard available < 1 else { return .allowed }
            return .limited(retryAfterSeconds: max(1, Int(((1 - available) / bucket.limit.perSecond).rounded(.up))))
        }
    }

    /// Charges `units` tokens to `keyID`'s bucket whether or not it holds them (see `TokenBucket.charge`): the cost
    /// of a request that was answered without taking tokens, such as one refused after its body was decoded.
    public func charge(_ units: Int, keyID: String, limit: TokenBucket.Limit? = nil) {
        _ = withBucket(keyID: keyID, limit: limit) { bucket, now in
            bucket.charge(units, now: now)
            return .allowed
        }
    }

    /// Takes `events` tokens from `keyID`'s bucket, created with `limit` (or the default) on first use.
    ///
    /// A changed `limit` for an existing key takes effect as a fresh, full bucket.
    public func tryTake(_ events: Int, keyID: String, limit: TokenBucket.Limit? = nil) -> TokenBucket.Decision {
        withBucket(keyID: keyID, limit: limit) { bucket, now in bucket.tryTake(events, now: now) }
    }

    // Both calls share one rule: a key's bucket is created full on first use and replaced when its limit changes.
    private func withBucket(
        keyID: String, limit: TokenBucket.Limit?,
        _ body: (inout TokenBucket, ContinuousClock.Instant) -> TokenBucket.Decision
    ) -> TokenBucket.Decision {
        let now = clock()
        let limit = limit ?? defaultLimit
        return buckets.withLock { buckets in
            var bucket = buckets[keyID].flatMap { $0.limit == limit ? $0 : nil } ?? TokenBucket(limit: limit, now: now)
            let decision = body(&bucket, now)
            buckets[keyID] = bucket
            return decision
        }
    }
}
