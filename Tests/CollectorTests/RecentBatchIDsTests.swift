import Collector
import Dispatch
import Synchronization
import Testing

@Suite struct RecentBatchIDsTests {
    /// A settable clock for expiry tests.
    final class TestClock: Sendable {
        private let instant = Mutex(ContinuousClock.now)
        func now() -> ContinuousClock.Instant { instant.withLock { $0 } }
        func advance(_ duration: Duration) { instant.withLock { $0 += duration } }
    }

    func isNew(_ admission: RecentBatchIDs<Int>.Admission) -> Bool {
        if case .new = admission { return true }
        return false
    }

    func isInFlight(_ admission: RecentBatchIDs<Int>.Admission) -> Bool {
        if case .inFlight = admission { return true }
        return false
    }

    func answer(_ admission: RecentBatchIDs<Int>.Admission) -> Int? {
        if case .completed(let answer) = admission { return answer }
        return nil
    }

    @Test func aRetryAfterCompletionGetsTheSameAnswer() {
        let recent = RecentBatchIDs<Int>()
        #expect(isNew(recent.begin("app/batch-1")))
        #expect(isInFlight(recent.begin("app/batch-1")))
        recent.complete("app/batch-1", answer: 49)
        #expect(answer(recent.begin("app/batch-1")) == 49)
        #expect(isNew(recent.begin("app/batch-2")))
    }

    /// Ids are kept as digests: ids that differ in one character anywhere (or only in length, or only in their
    /// scope) are all new and keep their own answers, and an equal id built another way is the same id.
    @Test func idsKeptAsDigestsStayApartAndEqualIdsMeet() {
        let recent = RecentBatchIDs<Int>()
        let base = "com.example.shop/7c9e6679-7425-40de-944b-e07fc1f90ae7"
        var ids = [base, base + "x", String(base.dropLast()), "com.example.shoq/7c9e6679-7425-40de-944b-e07fc1f90ae7"]
        for (position, character) in base.enumerated() where character != "/" {
            var changed = Array(base)
            changed[position] = character == "0" ? "1" : "0"
            ids.append(String(changed))
        }
        for (index, id) in ids.enumerated() {
            #expect(isNew(recent.begin(id)), "\(id)")
            recent.complete(id, answer: index)
        }
        #expect(recent.count == ids.count)
        for (index, id) in ids.enumerated() {
            #expect(answer(recent.begin(id)) == index)
        }
        let rebuilt = ["com.example.shop", "7c9e6679-7425-40de-944b-e07fc1f90ae7"].joined(separator: "/")
        #expect(answer(recent.begin(rebuilt)) == 0)
    }

    @Test func storedAnswersAreBoundedInBytesOldestFirst() {
        let recent = RecentBatchIDs<[UInt8]>(maxAnswerBytes: 3_000, answerBytes: { $0.count })
        for index in 0..<5 {
            #expect(isNewAnswer(recent.begin("id-\(index)")))
            recent.complete("id-\(index)", answer: Array(repeating: UInt8(index), count: 1_000))
        }
        #expect(recent.storedAnswerBytes <= 3_000)
        #expect(recent.count == 3)
        #expect(isNewAnswer(recent.begin("id-0")), "the oldest answer went first")
        recent.abandon("id-0")
        if case .completed(let answer) = recent.begin("id-4") {
            #expect(answer.first == 4)
        } else {
            Issue.record("the newest answer is kept")
        }
        recent.abandon("id-4")
        #expect(recent.storedAnswerBytes <= 2_000)
    }

    private func isNewAnswer(_ admission: RecentBatchIDs<[UInt8]>.Admission) -> Bool {
        if case .new = admission { return true }
        return false
    }

    @Test func anAbandonedBatchIsNewAgain() {
        let recent = RecentBatchIDs<Int>()
        #expect(isNew(recent.begin("b")))
        recent.abandon("b")
        #expect(isNew(recent.begin("b")))
        #expect(recent.count == 1)
    }

    @Test func idsExpireAfterTheRetention() {
        let clock = TestClock()
        let recent = RecentBatchIDs<Int>(retention: .seconds(600), clock: clock.now)
        #expect(isNew(recent.begin("old")))
        recent.complete("old", answer: 1)
        clock.advance(.seconds(300))
        #expect(isNew(recent.begin("newer")))
        recent.complete("newer", answer: 2)
        clock.advance(.seconds(299))
        #expect(answer(recent.begin("old")) == 1)
        clock.advance(.seconds(2))
        #expect(isNew(recent.begin("old")), "601 s after its completion")
        #expect(answer(recent.begin("newer")) == 2)
        clock.advance(.seconds(601))
        _ = recent.begin("trigger")
        #expect(recent.count == 1)
    }

    @Test func completionRestartsTheRetention() {
        let clock = TestClock()
        let recent = RecentBatchIDs<Int>(retention: .seconds(10), clock: clock.now)
        #expect(isNew(recent.begin("slow")))
        clock.advance(.seconds(8))
        recent.complete("slow", answer: 7)
        clock.advance(.seconds(8))
        #expect(answer(recent.begin("slow")) == 7)
    }

    @Test func theOldestAreEvictedPastTheCapacity() {
        let recent = RecentBatchIDs<Int>(capacity: 100)
        for index in 0..<250 {
            #expect(isNew(recent.begin("id-\(index)")))
            recent.complete("id-\(index)", answer: index)
        }
        #expect(recent.count == 100)
        #expect(answer(recent.begin("id-249")) == 249)
        #expect(answer(recent.begin("id-150")) == 150)
        #expect(isNew(recent.begin("id-149")))
        #expect(recent.count == 100)
    }

    @Test func abandonAndRetryChurnStaysBounded() {
        let recent = RecentBatchIDs<Int>(capacity: 10)
        for _ in 0..<100_000 {
            #expect(isNew(recent.begin("flapping")))
            recent.abandon("flapping")
        }
        #expect(recent.count == 0)
    }

    @Test func concurrentRetriesPublishOnce() {
        let recent = RecentBatchIDs<Int>()
        let published = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 16) { _ in
            for batch in 0..<200 where isNew(recent.begin("b\(batch)")) {
                published.add(1, ordering: .relaxed)
                recent.complete("b\(batch)", answer: batch)
            }
        }
        #expect(published.load(ordering: .relaxed) == 200)
    }
}
