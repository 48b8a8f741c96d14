import Foundation
import Glibc
import Lifecycle
import Synchronization
import Testing

@Suite struct LoopThreadTests {
    @Test func stopInterruptsAnHourLongWaitAndJoinReturns() async {
        let turns = Atomic<Int>(0)
        let loop = LoopThread.every(.seconds(3_600), named: "test-loop") { turns.add(1, ordering: .relaxed) }
        #expect(await eventuallyTrue { turns.load(ordering: .relaxed) == 1 })
        let started = ContinuousClock.now
        await loop.stopAndJoin()
        #expect(ContinuousClock.now - started < .seconds(60), "the stop did not wait out the hour")
        #expect(turns.load(ordering: .relaxed) == 1)
        #expect(loop.join(timeout: .zero))
    }

    @Test func wakeEndsAWaitEarlyAndTheLoopGoesOn() async {
        let turns = Atomic<Int>(0)
        let loop = LoopThread.start(named: "test-wake") { loop in
            while loop.waitForWake() { turns.add(1, ordering: .relaxed) }
        }
        loop.wake()
        #expect(await eventuallyTrue { turns.load(ordering: .relaxed) >= 1 })
        await loop.stopAndJoin()
        #expect(loop.isStopping)
    }

    @Test func theKernelSeesTheThreadsNameCutTo15Bytes() async {
        let comm = Mutex<String?>(nil)
        let loop = LoopThread.start(named: "flowmeter-test-thread-name") { loop in
            let text = try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)
            comm.withLock { $0 = text?.trimmingCharacters(in: .whitespacesAndNewlines) }
        }
        await loop.join()
        #expect(comm.withLock { $0 } == "flowmeter-test-")
    }

    @Test func aDeadlineWatchExpiresOnlyWhatIsUnsettledAtItsDeadline() async {
        final class Item: Sendable {
            let id: Int
            let deadline: ContinuousClock.Instant
            let settled = Atomic<Bool>(false)
            init(_ id: Int, deadline: ContinuousClock.Instant) {
                self.id = id
                self.deadline = deadline
            }
        }
        let expired = Mutex<[Int]>([])
        let watch = DeadlineWatch<Item>(
            named: "test-deadlines", tick: .milliseconds(5), deadline: { $0.deadline },
            isSettled: { $0.settled.load(ordering: .relaxed) })
        watch.start { item in expired.withLock { $0.append(item.id) } }
        let now = ContinuousClock.now
        let settled = Item(1, deadline: now + .milliseconds(20))
        settled.settled.store(true, ordering: .relaxed)
        #expect(watch.add(settled))
        #expect(watch.add(Item(2, deadline: now + .milliseconds(20))))
        let late = Item(3, deadline: now + .seconds(3_600))
        #expect(watch.add(late))
        #expect(await eventuallyTrue { expired.withLock { $0 } == [2] })
        let remaining = watch.stop()
        #expect(remaining.map(\.id) == [3])
        #expect(!watch.add(Item(4, deadline: now)))
        await watch.join()
        #expect(expired.withLock { $0 } == [2])
    }
}

/// Polls `condition` until it holds or two minutes pass (a hang guard, not a timing assumption).
func eventuallyTrue(_ condition: @Sendable () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(120)
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return condition()
}
