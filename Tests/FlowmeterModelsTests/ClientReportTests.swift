import Foundation
import Testing

@testable import FlowmeterModels
@testable import FlowmeterWire

/// The optional batch-level `clientReport`: read the same on both decode paths, and never a reason to reject.
@Suite struct ClientReportTests {
    static func body(_ report: String) -> [UInt8] {
        Array(
            """
            {"id":"B-1","client":{"appID":"com.example.shop","appVersion":"5.2.1","platform":"ios"},
             "events":[{"kind":"unknownType","occurredAt":"2026-11-30T08:59:58Z"}],\(report)}
            """.utf8)
    }

    static let cases: [(String, [ClientReport.Discarded]?)] = [
        (
            #""clientReport":{"discarded":[{"reason":"queue_overflow","events":12},{"reason":"expired","events":3}]}"#,
            [.init(reason: "queue_overflow", events: 12), .init(reason: "expired", events: 3)]
        ),
        (
            #""clientReport":{"discarded":[{"events":4,"reason":"cap_exceeded","extra":[1,{"a":null}]}],"more":true}"#,
            [.init(reason: "cap_exceeded", events: 4)]
        ),
        (
            #""clientReport":{"discarded":[{"reason":"send_error","events":2.0}]}"#,
            [.init(reason: "send_error", events: 2)]
        ),
        (
            #""clientReport":{"discarded":[{"reason":"a_newer_reason","events":0}]}"#,
            [.init(reason: "a_newer_reason", events: 0)]
        ),
        (
            #""clientReport":{"discarded":[{"reason":"x","events":1},{"reason":"x","events":2}]}"#,
            [.init(reason: "x", events: 1), .init(reason: "x", events: 2)]
        ),
        (
            #""clientReport":{"discarded":[{"reason":"first","reason":"second","events":5,"events":6}]}"#,
            [.init(reason: "first", events: 5)]
        ),
        (
            #""clientReport":{"discarded":[{"reason":"ok","events":1}],"discarded":"shadowed"}"#,
            [.init(reason: "ok", events: 1)]
        ),
        // Malformed entries are skipped, the rest kept.
        (
            #""clientReport":{"discarded":[1,"x",null,[],{"reason":7,"events":1},{"reason":"neg","events":-1},"#
                + #"{"reason":"frac","events":1.5},{"reason":"big","events":1e30},{"reason":"","events":1},"#
                + #"{"reason":" ","events":1},{"reason":"bad\u0007","events":1},{"reason":"nul","events":null},"#
                + #"{"events":1},{"reason":"str","events":"3"},{"reason":"kept","events":9}]}"#,
            [.init(reason: "kept", events: 9)]
        ),
        // A wrong shape is ignored as a whole.
        (#""clientReport":null"#, nil),
        (#""clientReport":[{"reason":"queue_overflow","events":12}]"#, nil),
        (#""clientReport":"queue_overflow""#, nil),
        (#""clientReport":{"discarded":{"reason":"queue_overflow","events":12}}"#, nil),
        (#""clientReport":{"discarded":null}"#, nil),
        (#""clientReport":{"discarded":[]}"#, nil),
        (#""clientReport":{"other":[{"reason":"queue_overflow","events":12}]}"#, nil),
        (#""clientReport":{"discarded":[{"reason":"bad","events":-3}]}"#, nil),
        (
            #""clientReport":{"discarded":[{"reason":"queue_overflow","events":12}]},"clientReport":7"#,
            [.init(reason: "queue_overflow", events: 12)]
        ),
    ]

    @Test(arguments: cases.indices)
    func bothPathsReadTheSameReportAndKeepTheBatch(index: Int) throws {
        let (report, expected) = Self.cases[index]
        let bytes = Self.body(report)
        #expect(DifferentialTests.disagreement(bytes) == nil, "\(report)")
        let decoded = try FastBatchDecoder.decode(bytes)
        #expect(decoded.batch.events.count == 1 && decoded.dropped.isEmpty, "\(report)")
        #expect(decoded.batch.clientReport?.discarded == expected, "\(report)")
    }

    @Test func onlyTheFirstEntriesAreLookedAtAndLongReasonsAreCut() throws {
        let many = (0..<40).map { #"{"reason":"r\#($0)","events":1}"# }.joined(separator: ",")
        let long = String(repeating: "é", count: 300)
        let bytes = Self.body(
            #""clientReport":{"discarded":[\#(many),{"reason":"late","events":1}]},"x":{"discarded":[{"reason":"\#(long)","events":1}]}"#
        )
        #expect(DifferentialTests.disagreement(bytes) == nil)
        let report = try #require(try FastBatchDecoder.decode(bytes).batch.clientReport)
        #expect(report.discarded.count == ClientReport.maxEntries)
        #expect(report.discarded.last?.reason == "r31")
        let cut = try FastBatchDecoder.decode(
            Self.body(#""clientReport":{"discarded":[{"reason":"\#(long)","events":1}]}"#))
        #expect(cut.batch.clientReport?.discarded.first?.reason.unicodeScalars.count == 256)
    }

    @Test func aSyntaxErrorInsideTheReportIsStillInvalidJSON() {
        let bytes = Self.body(#""clientReport":{"discarded":[{"reason":"x","events":1,}}]}"#)
        #expect(throws: BatchDecodingError.self) { try FastBatchDecoder.decode(bytes) }
        #expect(DifferentialTests.disagreement(bytes) == nil)
    }

    @Test func theReportRoundTripsThroughTheModelsEncoder() throws {
        var batch = try FastBatchDecoder.decode(Self.body(Self.cases[0].0)).batch
        batch.sentAt = nil
        let encoded = try JSONEncoder().encode(batch)
        #expect(try FastBatchDecoder.decode(Array(encoded)).batch == batch)
        #expect(try FastBatchDecoder.decode(Array(encoded)).batch.clientReport?.totalEvents == 15)
    }
}
