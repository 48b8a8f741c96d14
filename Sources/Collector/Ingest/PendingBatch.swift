import FlowmeterModels
import HTTPServer
import Synchronization

/// One batch between enqueue and its answer: what to send on success, and who is waiting.
///
/// The first of three answers wins through `HTTPResponder.respond`, which sends only once: the delivery
/// completion (202 or 503), the enqueue failure (503 at once) and the deadline (503). Only the winner counts the
/// events' outcome, so every event gets exactly one.
final class PendingBatch: Sendable {
    /// The answer's body for a 202.
    let answer: [UInt8]
    /// The answer remembered for retries of the batch id: `answer` with its diagnostics bounded.
    let storedAnswer: [UInt8]
    /// The request's responder.
    let responder: HTTPResponder
    /// `appID/batchID` when the batch had an id to dedupe.
    let scopedID: String?
    /// Accepted events per kind label, for `flowmeter_events_total`: that label's counters and the events' number.
    let acceptedByKind: [(counters: KindOutcomeCounters, count: UInt64)]
    /// When the deadline answers 503.
    let deadline: ContinuousClock.Instant

    init(
        answer: [UInt8], storedAnswer: [UInt8]? = nil, responder: HTTPResponder, scopedID: String?,
        acceptedByKind: [(counters: KindOutcomeCounters, count: UInt64)], deadline: ContinuousClock.Instant
    ) {
        self.answer = answer
        self.storedAnswer = storedAnswer ?? answer
        self.responder = responder
        self.scopedID = scopedID
        self.acceptedByKind = acceptedByKind
        self.deadline = deadline
    }
}
