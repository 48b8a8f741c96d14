import FlowmeterModels
import FlowmeterWire
import Foundation
import Testing

/// The split of a batch record into parts (docs/api.md#kafka-topics): the same on every retry through any collector,
/// every part under the limit, and an event too big for any part in a part of its own.
@Suite struct BatchRecordWriterTests {
    static let client = ClientInfo(
        appID: "com.example.shop", appVersion: "5.2.1", platform: "ios", buildConfiguration: .release)

    /// `count` events with messages of varied length, so that parts hold different numbers of events.
    static func events(_ count: Int) -> [DiagnosticEvent] {
        (0..<count).map { index in
            DiagnosticEvent(
                id: "event-\(index)", kind: .unknownType, widgetType: "type-\(index % 7)",
                codingPath: "sections[\(index)].items", message: String(repeating: "m", count: 20 + index * 13 % 400),
                count: 1 + index % 3, occurredAt: Timestamp(secondsSinceEpoch: 1_800_000_000 + Int64(index)))
        }
    }

    /// The writer of `events` as `collector` writes them at `receivedAt` with `skewMillis`.
    static func writer(
        _ events: [DiagnosticEvent], collector: String = "collector-a", receivedAt: Int64 = 1_800_000_100,
        skewMillis: Int64 = 0, maxRecordBytes: Int
    ) -> BatchRecordWriter {
        BatchRecordWriter(
            batch: BatchRecordWriter.Batch(
                batchID: "batch-1", client: client, installHash: "0123456789abcdef0123456789abcdef", decodes: 40,
                clientReport: nil, receivedAt: Timestamp(secondsSinceEpoch: receivedAt), skewMillis: skewMillis,
                collector: collector, dropped: 0),
            table: EventTable(events), positions: Array(events.indices), maxRecordBytes: maxRecordBytes)
    }

    /// Every part's value.
    static func values(_ writer: BatchRecordWriter) -> [[UInt8]] {
        writer.parts.indices.map { part in
            var bytes = [UInt8](repeating: 0, count: writer.maxLength(part: part))
            let length = bytes.withUnsafeMutableBytes { writer.write(part: part, into: $0) }
            return Array(bytes[..<length])
        }
    }

    /// A part's value as a JSON object.
    static func object(_ value: [UInt8]) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(value)) as? [String: Any])
    }

    /// The ids of a part's events.
    static func eventIDs(_ value: [UInt8]) throws -> [String] {
        let events = try #require(try object(value)["events"] as? [[String: Any]])
        return events.compactMap { $0["id"] as? String }
    }

    @Test func splitIsTheSameForEveryCopyThroughAnyCollector() throws {
        let events = Self.events(300)
        let first = Self.writer(events, maxRecordBytes: 16_384)
        let again = Self.writer(events, maxRecordBytes: 16_384)
        let elsewhere = Self.writer(
            events,
            collector: "collector-with-a-much-longer-name-in-another-zone-\(String(repeating: "x", count: 200))",
            receivedAt: 1_800_003_000, skewMillis: -987_654, maxRecordBytes: 16_384)
        #expect(first.parts.count > 3)
        #expect(first.parts == again.parts)
        #expect(first.parts == elsewhere.parts)
        #expect(first.keyBytes == elsewhere.keyBytes)
        #expect(String(decoding: first.keyBytes, as: UTF8.self) == "com.example.shop/batch-1")
        #expect(Self.values(first) == Self.values(again))
        let firstIDs = try Self.values(first).map(Self.eventIDs)
        let elsewhereIDs = try Self.values(elsewhere).map(Self.eventIDs)
        #expect(firstIDs == elsewhereIDs)
    }

    @Test func everyPartIsUnderTheLimitAndSaysWhichPartItIs() throws {
        let events = Self.events(500)
        for limit in [4_096, 8_192, 65_536] {
            let writer = Self.writer(
                events, collector: String(repeating: "c", count: 300), skewMillis: 123_456_789, maxRecordBytes: limit)
            let values = Self.values(writer)
            #expect(values.count == writer.parts.count)
            var ids: [String] = []
            for (index, value) in values.enumerated() {
                #expect(
                    value.count <= limit, "part \(index) of \(values.count) at limit \(limit): \(value.count) bytes")
                let object = try Self.object(value)
                #expect(object["part"] as? Int == index)
                #expect(object["parts"] as? Int == values.count)
                #expect(object["batchID"] as? String == "batch-1")
                ids += try Self.eventIDs(value)
            }
            // Every event once, in order, over the parts.
            #expect(ids == events.map { $0.id! })
        }
    }

    @Test func batchThatFitsIsOnePart() throws {
        let writer = Self.writer(Self.events(10), maxRecordBytes: 1_000_000)
        #expect(writer.parts == [0..<10])
        let object = try Self.object(Self.values(writer)[0])
        #expect(object["part"] as? Int == 0)
        #expect(object["parts"] as? Int == 1)
    }

    @Test func batchWithoutEventsIsOneEmptyPart() throws {
        let writer = Self.writer([], maxRecordBytes: 4_096)
        #expect(writer.parts == [0..<0])
        #expect(try Self.eventIDs(Self.values(writer)[0]).isEmpty)
    }

    @Test func oversizedEventTakesAPartOfItsOwn() throws {
        var events = Self.events(40)
        let huge = DiagnosticEvent(
            id: "huge", kind: .unknownType, widgetType: "type-huge", message: String(repeating: "h", count: 20_000),
            occurredAt: Timestamp(secondsSinceEpoch: 1_800_000_050))
        events.insert(huge, at: 17)
        let limit = 8_192
        let writer = Self.writer(events, maxRecordBytes: limit)
        let values = Self.values(writer)
        let ids = try values.map(Self.eventIDs)
        let hugePart = try #require(ids.firstIndex { $0.contains("huge") })
        #expect(ids[hugePart] == ["huge"])
        for (index, value) in values.enumerated() where index != hugePart {
            #expect(value.count <= limit, "part \(index): \(value.count) bytes")
        }
        #expect(ids.flatMap { $0 } == events.map { $0.id! })
        // And the same split from another collector.
        let elsewhere = Self.writer(events, collector: "collector-b", skewMillis: 5_000, maxRecordBytes: limit)
        #expect(elsewhere.parts == writer.parts)
    }
}
