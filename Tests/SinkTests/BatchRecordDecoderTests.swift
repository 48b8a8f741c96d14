import FlowmeterModels
import FlowmeterWire
import Foundation
import FuzzTargets
import Sink
import Testing

/// ``BatchRecordDecoder`` (the sink's one-pass decoder) against the `Codable` reference, ``BatchRecord``: every
/// check goes through the `batch-record` fuzz target's invariants (same verdict, same fields and events byte for
/// byte, a kept decoder equal to a fresh one), and each case also states the verdict it expects, so that a case
/// both decoders got wrong the same way still fails.
@Suite struct BatchRecordDecoderTests {
    static let receivedAt = Timestamp(secondsSinceEpoch: 1_796_464_800, nanoseconds: 123_000_000)

    /// Both decoders on `text`; returns the fast decoder's record, or nil when both rejected it.
    @discardableResult
    func agree(_ bytes: [UInt8], accepted: Bool, _ comment: Comment? = nil) throws -> CompactBatchRecord? {
        if let failure = FuzzTargets.failure(of: BatchRecordFuzzTarget.self, on: bytes) {
            Issue.record("\(failure.message) \(comment.map { "(\($0))" } ?? "")")
        }
        var decoder = BatchRecordDecoder()
        let record = try? decoder.decode(bytes)
        #expect((record != nil) == accepted, "\(String(decoding: bytes, as: UTF8.self))")
        return record
    }

    @discardableResult
    func agree(_ text: String, accepted: Bool) throws -> CompactBatchRecord? {
        try agree(Array(text.utf8), accepted: accepted)
    }

    /// A record of the required fields and `members`, which replace any required field they name (a repeated key
    /// would leave the first, as both decoders read it).
    static func record(_ members: String) -> String {
        let required = [
            ("batchID", #""b""#), ("appID", #""a""#), ("appVersion", #""1""#), ("platform", #""ios""#),
            ("receivedAt", #""2026-12-05T10:00:00Z""#),
        ]
        let kept = required.filter { !members.hasPrefix("\"\($0.0)\":") && !members.contains(",\"\($0.0)\":") }
        return "{" + kept.map { "\"\($0.0)\":\($0.1)," }.joined() + members + "}"
    }

    @Test func recordsTheCollectorWritesDecodeToEveryField() throws {
        let client = ClientInfo(
            appID: "com.example.shop", appVersion: "5.2.1", build: "512", platform: "ios", osVersion: "17.4",
            sdkVersion: "1.3.0", buildConfiguration: .debug, unknownPolicy: .placeholder,
            capabilities: Capabilities(maxSchemaVersion: 3, registeredTypes: ["hero", "carousel"]))
        let events = (0..<40).map { index in
            DiagnosticEvent(
                id: index % 3 == 0 ? "own-\(index)" : nil, kind: index % 2 == 0 ? .unknownType : .malformedPayload,
                widgetType: "type-\(index % 5)", codingPath: "page.sections.Index \(index).widgets.Index 1",
                message: "Unknown \"type-\(index % 5)\" \\ é 😀", pageID: "home", surface: "page",
                backendRelease: "pages@1.\(index % 2)", count: 1 + index % 4,
                occurredAt: Timestamp(secondsSinceEpoch: 1_796_464_700 + Int64(index), nanoseconds: 5_000_000))
        }
        let report = ClientReport(discarded: [
            .init(reason: "queue_overflow", events: 3), .init(reason: "expired", events: 1),
        ])
        let writer = BatchRecordWriter(
            batch: BatchRecordWriter.Batch(
                batchID: "batch-1", client: client, installHash: "0123456789abcdef0123456789abcdef", decodes: 12,
                clientReport: report, receivedAt: Self.receivedAt, skewMillis: -1_500, collector: "collector-a",
                dropped: 2),
            table: EventTable(events), positions: Array(events.indices), maxRecordBytes: 5_000)
        #expect(writer.parts.count > 2, "the batch is split into parts")
        var decoder = BatchRecordDecoder()
        for part in writer.parts.indices {
            var bytes = [UInt8](repeating: 0, count: writer.maxLength(part: part))
            let length = bytes.withUnsafeMutableBytes { writer.write(part: part, into: $0) }
            bytes.removeSubrange(length...)
            try agree(bytes, accepted: true, "part \(part)")
            let record = try decoder.decode(bytes)
            #expect(record.batchID == "batch-1")
            #expect(record.client == client)
            #expect(record.installHash == "0123456789abcdef0123456789abcdef")
            #expect(record.decodes == 12)
            #expect(record.clientReport == report)
            #expect(record.receivedAt == Self.receivedAt)
            #expect(record.skewMillis == -1_500)
            #expect(record.collector == "collector-a")
            #expect(record.dropped == 2)
            #expect(record.part == part && record.parts == writer.parts.count)
            let expected = writer.parts[part].map { index in
                var event = events[index]
                event.id = event.id ?? "batch-1/\(index)"
                let shifted =
                    event.occurredAt.secondsSinceEpoch * 1_000 + Int64(event.occurredAt.nanoseconds) / 1_000_000 - 1_500
                event.occurredAt = Timestamp(
                    secondsSinceEpoch: shifted / 1_000, nanoseconds: Int32(shifted % 1_000) * 1_000_000)
                return event
            }
            #expect(record.events == expected)
            #expect(record.key == BatchRecord.key(appID: "com.example.shop", batchID: "batch-1", part: part))
        }
    }

    @Test func missingOptionalsTakeTheReferenceDefaults() throws {
        let record = try #require(try agree(Self.record(#""events":[]"#), accepted: true))
        #expect(record.installHash == nil && record.decodes == nil && record.clientReport == nil)
        #expect(record.skewMillis == 0 && record.collector == "" && record.dropped == 0)
        #expect(record.part == 0 && record.parts == 1 && record.table.isEmpty)
        #expect(record.client.build == nil && record.client.capabilities == nil)
        #expect(record.client.buildConfiguration == .release && record.client.unknownPolicy == nil)
        let nulls = try #require(
            try agree(
                Self.record(
                    #""installHash":null,"decodes":null,"clientReport":null,"skewMillis":null,"collector":null,"#
                        + #""dropped":null,"part":null,"parts":null,"build":null,"capabilities":null,"events":[]"#),
                accepted: true))
        #expect(nulls.part == 0 && nulls.parts == 1 && nulls.collector == "")
        try agree(Self.record(#""capabilities":{},"clientReport":{"discarded":[]},"events":[]"#), accepted: true)
        try agree(Self.record(#""capabilities":{"registeredTypes":null},"events":[]"#), accepted: true)
        try agree(Self.record(#""unknownPolicy":"someday","buildConfiguration":"Beta","events":[]"#), accepted: true)
        try agree(Self.record(#""events":[{"kind":"x","occurredAt":"2026-12-05T10:00:00Z"}]"#), accepted: true)
    }

    @Test func escapesDecodeAsTheReferenceDecodesThem() throws {
        let record = try #require(
            try agree(
                #"{"batchID":"b\u00e9\"\\\/","appID":"com.ex\u0061mple","appVersion":"1","platform":"ios","#
                    + #""installHash":"h\ud83d\ude00","collector":"c\n\t","receivedAt":"2026-12-05T10:00:00Z","#
                    + #""clientReport":{"discarded":[{"reason":"a\u0020b","events":1}]},"#
                    + #""events":[{"kind":"unknown\u0054ype","message":"a\tb\u2028c","codingPath":"p\/q","#
                    + #""id":"\u00e9","widgetType":"w\u00e9","occurredAt":"2026-12-05T10:00:00\u005a"}]}"#,
                accepted: true))
        #expect(record.batchID == "bé\"\\/")
        #expect(record.client.appID == "com.example")
        #expect(record.installHash == "h😀")
        #expect(record.collector == "c\n\t")
        #expect(record.events.first?.message == "a\tb\u{2028}c")
        #expect(record.events.first?.kind == .unknownType)
        // A reason the ingest path would skip (not an identifier) is kept: the record's report is read strictly.
        #expect(record.clientReport?.discarded.first?.reason == "a b")
    }

    @Test func oddButValidJSONIsReadAsFoundationReadsIt() throws {
        try agree("\u{FEFF} " + Self.record(#""events":[],"unknown":{"deep":[[[{}]]]},"decodes":1.0"#), accepted: true)
        let duplicate = try #require(
            try agree(
                Self.record(#""batchID":"b","batchID":"second","part":0,"part":5,"events":[],"events":7"#),
                accepted: true))
        #expect(duplicate.batchID == "b" && duplicate.part == 0)
        try agree(
            Self.record(#""events":[{"kind":"x","count":2e0,"occurredAt":"2026-12-05T10:00:00Z",},],"#), accepted: true)
        try agree(
            Self.record(#""capabilities":{"registeredTypes":["\#(String(repeating: "t", count: 300))"]},"events":[]"#),
            accepted: true)
        try agree(
            Self.record(#""events":[{"kind":"x","occurredAt":"2026-12-05T10:00:00.123456789+05:30"}]"#), accepted: true)
    }

    @Test(arguments: [
        "", " ", "[]", "null", "\"record\"", "{", "{}", "{\"batchID\":\"b\"}",
        record(#""events":[]"#).replacingOccurrences(of: #""batchID":"b","#, with: ""),
        record(#""events":[]"#).replacingOccurrences(of: #""appID":"a","#, with: ""),
        record(#""events":[]"#).replacingOccurrences(of: #","receivedAt":"2026-12-05T10:00:00Z""#, with: ""),
        record(#""events":null"#), record(#""events":{}"#), record(#""events":[1]"#), record(#""events":[null]"#),
        record(#""batchID":null,"events":[]"#), record(#""batchID":1,"events":[]"#),
        record(#""appID":"a\u0007b","events":[]"#), record(#""appID":"","events":[]"#),
        record(#""appVersion":null,"events":[]"#), record(#""platform":["ios"],"events":[]"#),
        record(#""installHash":7,"events":[]"#), record(#""collector":false,"events":[]"#),
        record(#""decodes":"12","events":[]"#), record(#""decodes":1.5,"events":[]"#),
        record(#""decodes":9223372036854775808,"events":[]"#), record(#""skewMillis":1e30,"events":[]"#),
        record(#""dropped":[],"events":[]"#),
        record(#""part":1,"events":[]"#), record(#""part":-1,"events":[]"#), record(#""parts":0,"events":[]"#),
        record(#""part":2,"parts":2,"events":[]"#),
        record(#""capabilities":[],"events":[]"#), record(#""capabilities":{"maxSchemaVersion":"3"},"events":[]"#),
        record(#""capabilities":{"registeredTypes":[1]},"events":[]"#),
        record(#""capabilities":{"registeredTypes":[null]},"events":[]"#),
        record(#""capabilities":{"registeredTypes":["  "]},"events":[]"#),
        record(#""capabilities":{"registeredTypes":"hero"},"events":[]"#),
        record(#""clientReport":[],"events":[]"#), record(#""clientReport":{},"events":[]"#),
        record(#""clientReport":{"discarded":null},"events":[]"#),
        record(#""clientReport":{"discarded":[1]},"events":[]"#),
        record(#""clientReport":{"discarded":[{"reason":"x"}]},"events":[]"#),
        record(#""clientReport":{"discarded":[{"events":1}]},"events":[]"#),
        record(#""clientReport":{"discarded":[{"reason":"x","events":null}]},"events":[]"#),
        record(#""clientReport":{"discarded":[{"reason":null,"events":1}]},"events":[]"#),
        record(#""events":[{"occurredAt":"2026-12-05T10:00:00Z"}]"#),
        record(#""events":[{"kind":"x"}]"#),
        record(#""events":[{"kind":"x","occurredAt":"yesterday"}]"#),
        record(#""events":[{"kind":"x","count":0,"occurredAt":"2026-12-05T10:00:00Z"}]"#),
        record(#""events":[{"kind":"x","count":-1,"occurredAt":"2026-12-05T10:00:00Z"}]"#),
        record(#""events":[{"kind":"x","id":"a\nb","occurredAt":"2026-12-05T10:00:00Z"}]"#),
        record(#""events":[{"kind":"x","pageID":5,"occurredAt":"2026-12-05T10:00:00Z"}]"#),
        record(#""events":[{"kind":null,"occurredAt":"2026-12-05T10:00:00Z"}]"#),
        record(#""receivedAt":"2026-02-30T10:00:00Z","events":[]"#), record(#""receivedAt":null,"events":[]"#),
        record(#""events":[]"#) + "x", record(#""events":[]"#) + "{}", record(#""events":[],,"#),
        record(#""events":[1,,]"#), record(#""events":[]"#).replacingOccurrences(of: "\"b\"", with: "\"\\ud800\""),
        record(#""events":[]"#).replacingOccurrences(of: "\"b\"", with: "\"\\x\""),
        record(#""events":[],"deep":"# + String(repeating: "[", count: 600) + String(repeating: "]", count: 600)),
    ])
    func hostileRecordsAreRejectedByBoth(text: String) throws {
        try agree(text, accepted: false)
    }

    @Test func invalidUTF8IsRejectedByBoth() throws {
        var bytes = Array(Self.record(#""events":[]"#).utf8)
        bytes[13] = 0xFF
        try agree(bytes, accepted: false)
        try agree([0xEF, 0xBB], accepted: false)
    }

    @Test func everyTruncationOfAWrittenRecordIsRejectedByBoth() throws {
        let text = Self.record(
            #""installHash":"h","clientReport":{"discarded":[{"reason":"x","events":1}]},"#
                + #""capabilities":{"maxSchemaVersion":3,"registeredTypes":["hero"]},"#
                + #""events":[{"id":"b/0","kind":"unknownType","widgetType":"hero","count":2,"#
                + #""occurredAt":"2026-12-05T10:00:00.5Z"}]"#)
        let bytes = Array(text.utf8)
        try agree(bytes, accepted: true)
        for length in 0..<bytes.count where length != bytes.count {
            try agree(Array(bytes[..<length]), accepted: false)
        }
    }
}
