import Collector
import Dispatch
import Synchronization
import Testing

@Suite struct TokenBucketTests {
    let start = ContinuousClock.now

    @Test func aFullBucketAllowsTheBurstThenLimits() {
        var bucket = TokenBucket(limit: .init(perSecond: 10, burst: 100), now: start)
        #expect(bucket.tryTake(60, now: start) == .allowed)
        #expect(bucket.tryTake(40, now: start) == .allowed)
        #expect(bucket.tryTake(1, now: start) == .limited(retryAfterSeconds: 1))
        #expect(bucket.tryTake(25, now: start) == .limited(retryAfterSeconds: 3))
    }

    @Test func tokensRefillAtTheRateUpToTheBurst() {
        var bucket = TokenBucket(limit: .init(perSecond: 10, burst: 100), now: start)
        #expect(bucket.tryTake(100, now: start) == .allowed)
        #expect(bucket.tryTake(20, now: start + .seconds(1)) == .limited(retryAfterSeconds: 1))
        #expect(bucket.tryTake(20, now: start + .seconds(2)) == .allowed)
        #expect(bucket.available(now: start + .seconds(1_000)) == 100)
    }

    @Test func retryAfterIsWhenEnoughTokensWillBeBack() {
        var bucket = TokenBucket(limit: .init(perSecond: 2, burst: 10), now: start)
        #expect(bucket.tryTake(10, now: start) == .allowed)
        guard case .limited(let seconds) = bucket.tryTake(9, now: start) else {
            Issue.record("expected a limit")
            return
        }
        #expect(seconds == 5)
        #expect(bucket.tryTake(9, now: start + .seconds(seconds)) == .allowed)
    }

    @Test func batchesLargerThanTheBurstPassWhenTheBucketIsFull() {
        var bucket = TokenBucket(limit: .init(perSecond: 1, burst: 5), now: start)
        #expect(bucket.tryTake(50, now: start) == .allowed)
        #expect(bucket.tryTake(50, now: start) == .limited(retryAfterSeconds: 5))
        #expect(bucket.tryTake(0, now: start) == .limited(retryAfterSeconds: 1), "an empty batch still costs one")
    }

    @Test func aClockSteppingBackDoesNotMintTokens() {
        var bucket = TokenBucket(limit: .init(perSecond: 10, burst: 10), now: start + .seconds(5))
        #expect(bucket.tryTake(10, now: start + .seconds(5)) == .allowed)
        #expect(bucket.tryTake(1, now: start) != .allowed)
    }

    @Test func keysHaveSeparateBuckets() {
        let now = Mutex(start)
        let limiter = RateLimiter(defaultLimit: .init(perSecond: 1, burst: 10), clock: { now.withLock { $0 } })
        #expect(limiter.tryTake(10, keyID: "a") == .allowed)
        #expect(limiter.tryTake(1, keyID: "a") != .allowed)
        #expect(limiter.tryTake(10, keyID: "b") == .allowed)
        #expect(limiter.tryTake(100, keyID: "c", limit: .init(perSecond: 100, burst: 100)) == .allowed)
        now.withLock { $0 += .seconds(3) }
        #expect(limiter.tryTake(3, keyID: "a") == .allowed)
    }

    @Test func concurrentTakersNeverExceedTheBurst() {
        let limiter = RateLimiter(defaultLimit: .init(perSecond: 0.001, burst: 1_000), clock: { [start] in start })
        let allowed = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<500 where limiter.tryTake(1, keyID: "hot") == .allowed {
                allowed.add(1, ordering: .relaxed)
            }
        }
        #expect(allowed.load(ordering: .relaxed) == 1_000)
    }
}

@Suite struct TokenBucketChargeTests {
    let start = ContinuousClock.now

    @Test func aChargeTakesTokensTheBucketLacksAndTheDebtIsRepaidByTheRefill() {
        var bucket = TokenBucket(limit: .init(perSecond: 10, burst: 100), now: start)
        bucket.charge(60, now: start)
        bucket.charge(60, now: start)
        #expect(bucket.available(now: start) == -20)
        #expect(bucket.tryTake(1, now: start) == .limited(retryAfterSeconds: 3))
        // The debt stops at minus the burst, so a key waits at most two bursts' worth of refill.
        for _ in 0..<10 { bucket.charge(1_000, now: start) }
        #expect(bucket.available(now: start) == -100)
        #expect(bucket.tryTake(1, now: start + .seconds(10)) == .limited(retryAfterSeconds: 1))
        #expect(bucket.tryTake(1, now: start + .seconds(11)) == .allowed)
    }

    @Test func theLimiterRefusesAKeyInDebtBeforeItsBodyIsRead() {
        let limiter = RateLimiter(defaultLimit: .init(perSecond: 1, burst: 5), clock: { [start] in start })
        #expect(limiter.check(keyID: "k") == .allowed)
        limiter.charge(7, keyID: "k")
        #expect(limiter.check(keyID: "k") != .allowed)
        #expect(limiter.check(keyID: "other") == .allowed)
    }
}
