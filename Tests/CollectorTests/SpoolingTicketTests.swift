import Synchronization
import Testing

@testable import Collector

/// One batch's way through the spooling delivery: the answer runs once, and lets go of what it holds at once.
@Suite struct SpoolingTicketTests {
    /// How many ``Held``s were freed.
    final class Frees: Sendable {
        let count = Atomic<Int>(0)
        var value: Int { count.load(ordering: .relaxed) }
    }

    /// Something a completion holds, which says when it is freed.
    final class Held: Sendable {
        let frees: Frees
        init(_ frees: Frees) { self.frees = frees }
        deinit { frees.count.add(1, ordering: .relaxed) }
    }

    @Test func theAnswerRunsOnceAndLetsGoOfItsCompletionWhileTheTicketLives() {
        let freed = Frees()
        let answers = Mutex<[SpoolingDelivery.Outcome]>([])
        let ticket: SpoolingTicket
        do {
            let held = Held(freed)
            ticket = SpoolingTicket(
                batch: SpoolBatch(topic: "t", headers: []), deadline: .now + .seconds(1),
                completion: { outcome in
                    _ = held
                    answers.withLock { $0.append(outcome) }
                })
        }
        #expect(freed.value == 0)
        ticket.answer(.persisted)
        // The threshold thread holds the ticket for up to a tick more: what the completion held is freed already.
        #expect(freed.value == 1)
        ticket.answer(.spooled)
        #expect(answers.withLock { $0 } == [.persisted])
    }
}
