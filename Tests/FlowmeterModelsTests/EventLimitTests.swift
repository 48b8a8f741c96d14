import Foundation
import Testing

@testable import FlowmeterModels
@testable import FlowmeterWire

/// The fast decoder's `maxEvents`: the collector's one pass over a body, stopping at the event past the limit.
@Suite struct EventLimitTests {
    static func body(events: Int, tail: String = "") -> [UInt8] {
        let event = #"{"kind":"unknownType","occurredAt":"2026-11-30T08:59:58Z","widgetType":"carousel_v2"}"#
        return Array(
            """
            {"client":{"appID":"com.example.shop","appVersion":"5.2.1","platform":"ios"},
             "events":[\(Array(repeating: event, count: events).joined(separator: ","))]\(tail)}
            """.utf8)
    }

    @Test func aBatchAtTheLimitDecodes() throws {
        let decoded = try FastBatchDecoder.decode(Self.body(events: 3), maxEvents: 3)
        #expect(decoded.batch.events.count == 3)
        #expect(try FastBatchDecoder.decode(Self.body(events: 0), maxEvents: 0).batch.events.isEmpty)
    }

    @Test func theEventPastTheLimitStopsTheDecode() {
        #expect(throws: BatchDecodingError(.tooManyEvents, "More than 2 events in the batch", path: "events")) {
            try FastBatchDecoder.decode(Self.body(events: 3), maxEvents: 2)
        }
        // Whatever follows the element past the limit is not looked at, broken or not.
        #expect(throws: BatchDecodingError(.tooManyEvents, "More than 2 events in the batch", path: "events")) {
            try FastBatchDecoder.decode(Self.body(events: 3, tail: ",\"x\":[1,,]"), maxEvents: 2)
        }
        // Elements that are not objects count too: a million broken elements cost one report, not a million.
        let broken = Array(#"{"client":{},"events":[1,2,3,4,5,6,7,8,9,10]}"#.utf8)
        #expect(throws: BatchDecodingError(.tooManyEvents, "More than 5 events in the batch", path: "events")) {
            try FastBatchDecoder.decode(broken, maxEvents: 5)
        }
    }

    @Test func aSyntaxErrorBeforeTheLimitIsStillInvalidJSON() throws {
        let error = try #require(throws: BatchDecodingError.self) {
            try FastBatchDecoder.decode(Array(#"{"events":[{"kind":}, 1, 2]}"#.utf8), maxEvents: 1)
        }
        #expect(error.code == .invalidJSON)
    }

    @Test func withoutALimitNothingChanges() throws {
        let body = SyntheticBatches.batch(seed: 3)
        #expect(try FastBatchDecoder.decode(body) == FastBatchDecoder.decode(body, maxEvents: 50))
    }
}
