import Foundation
import Testing

@testable import FlowmeterModels
@testable import FlowmeterWire

/// The collector's string-free events: the decoder's tables, the table made from full events, and the records and
/// keys written from one table, escaped once per entry.
@Suite struct CompactBatchTests {
    private static let receivedAt = Timestamp(secondsSinceEpoch: 1_796_029_200, nanoseconds: 5_000)

    /// A batch's repeated kinds and widget types are one entry each, shared by every event that names them.
    @Test func repeatedValuesAreOneTableEntry() throws {
        // The collector's size: with 64 slots a batch's 50 coding paths evict its kinds, which then come back as
        // new entries (still correct, only less shared).
        var interner = StringInterner(slots: 1_024)
        let body = SyntheticBatches.batch(seed: 11, events: 50)
        let compact = try FastBatchDecoder.decodeCompact(body, interner: &interner)
        let table = compact.table
        #expect(table.count == 50)
        var kindEntries: [String: Set<Int32>] = [:]
        var fields = 0
        for event in table.events {
            kindEntries[table.strings[Int(event.kind)], default: []].insert(event.kind)
            for index in [event.widgetType, event.codingPath, event.message, event.pageID, event.surface] {
                if index >= 0 { fields += 1 }
            }
        }
        #expect(kindEntries.values.allSatisfy { $0.count == 1 }, "\(kindEntries)")
        #expect(table.strings.count < fields + table.count)
        #expect(compact.decoded == (try FastBatchDecoder.decode(body)))
    }

    /// Ids are kept as bytes, not strings: escaped, multi-byte, cut at the limit, or breaking the rule, each reads
    /// back as the Codable decoder's id, and the table holds no `String` of any.
    @Test func idsAreKeptAsTheirBytes() throws {
        let ids = [
            #""plain-1""#, #""esc\u00e9\"q\\x\/y""#, "\"" + String(repeating: "é", count: 300) + "\"",
            #""\ud83d\ude00 pair""#, #""\u0001control""#, "null", "17", #""   ""#, #""""#,
        ]
        let events = ids.enumerated().map { index, id in
            #"{"id":\#(id),"kind":"unknownType","widgetType":"w\#(index)","occurredAt":"2026-12-03T10:00:00Z"}"#
        }
        let body = Array(
            (#"{"client":{"appID":"a","appVersion":"1","platform":"ios"},"events":["#
                + events.joined(separator: ",") + "]}").utf8)
        var interner = StringInterner()
        let compact = try FastBatchDecoder.decodeCompact(body, interner: &interner)
        let reference = try CodableBatchDecoder.decode(Data(body))
        #expect(compact.decoded == reference)
        #expect(compact.decoded.batch.events.map(\.id) == reference.batch.events.map(\.id))
        // The control character, the number and the blank id drop their events; null is no id.
        #expect(compact.table.count == reference.batch.events.count)
        #expect(reference.batch.events.contains { $0.id?.unicodeScalars.count == FieldLimits.other })
        for value in reference.batch.events.compactMap(\.id) {
            #expect(!compact.table.strings.contains(value))
        }
    }

    /// One interner lent to batch after batch (few slots, so they evict each other): every batch's table is its own,
    /// and every batch decodes as it does fresh.
    @Test func aKeptInternerStartsEachBatchsTableAfresh() throws {
        var interner = StringInterner(slots: 8)
        var storage = EventTableStorage()
        for seed in 0..<40 as Range<UInt64> {
            let body = SyntheticBatches.batch(seed: seed % 7, events: Int(seed % 5) * 13 + 1)
            let compact = try FastBatchDecoder.decodeCompact(body, interner: &interner, storage: storage)
            for event in compact.table.events {
                for index in [
                    event.kind, event.widgetType, event.codingPath, event.message, event.pageID, event.surface,
                    event.backendRelease,
                ] {
                    #expect(index >= CompactEvent.absent && Int(index) < compact.table.strings.count)
                }
                // An id is its length and bytes in the table's id bytes.
                #expect(event.id >= CompactEvent.absent && Int(event.id) < max(1, compact.table.idBytes.count))
            }
            #expect(compact.decoded == (try FastBatchDecoder.decode(body)), "seed \(seed)")
            storage = compact.table.storage
        }
    }

    /// Full events made compact read back as themselves; removing events keeps the others and their strings.
    @Test func aTableOfFullEventsReadsBackAsThem() {
        let events = SyntheticBatches.batchValue(seed: 3, events: 20).events
        var table = EventTable(events)
        #expect(table.diagnosticEvents == events)
        #expect(table.events.indices.allSatisfy { table.kind(of: table.events[$0]) == events[$0].kind })
        table.removeEvents(atAscendingOffsets: [0, 5, 6, 19])
        let kept = events.indices.filter { ![0, 5, 6, 19].contains($0) }.map { events[$0] }
        #expect(table.diagnosticEvents == kept)
        table.removeEvents(atAscendingOffsets: [])
        #expect(table.count == kept.count)
    }

    /// Keys and records written from a table, each entry escaped once, are the per-event writers' bytes for the
    /// same events, within the writer's bounds: odd strings in every field, with and without ids and types, and
    /// entries shared by many events.
    @Test(arguments: BatchGenerator.oddStrings)
    func compactRecordsAreThePerEventWritersBytes(text: String) throws {
        let kind = DiagnosticKind(rawValue: text) ?? DiagnosticKind(rawValue: "kind \(text.count)")!
        var events: [DiagnosticEvent] = []
        for index in 0..<8 {
            events.append(
                DiagnosticEvent(
                    id: index % 3 == 0 ? text + "-\(index)" : nil, kind: index % 2 == 0 ? kind : .unknownType,
                    widgetType: index % 4 == 1 ? nil : text, codingPath: text, message: index % 2 == 0 ? text : nil,
                    pageID: text, surface: index % 3 == 2 ? nil : text, backendRelease: text, count: index + 1,
                    occurredAt: Timestamp(secondsSinceEpoch: 1_796_029_000 + Int64(index), nanoseconds: 250)))
        }
        let client = ClientInfo(appID: text, appVersion: text, platform: "ios", buildConfiguration: .release)
        let shared = EventRecordBatch(
            batchID: text, client: client, installHash: text, receivedAt: Self.receivedAt, collector: text)
        // The decoder's table shares entries between events; the one of full events does not: both write alike.
        var interner = StringInterner()
        let body = try JSONEncoder().encode(
            DiagnosticBatch(id: nil, sentAt: nil, client: client, decodes: nil, events: events, clientReport: nil))
        let decoded = try? FastBatchDecoder.decodeCompact([UInt8](body), interner: &interner).table
        for table in [EventTable(events)] + (decoded.map { [$0] } ?? []) {
            let writer = CompactRecordWriter(table: table, shared: shared, keyPrefix: .init(appID: text))
            for (index, compact) in table.events.enumerated() {
                let event = table.diagnosticEvent(compact)
                var expected: [UInt8] = []
                EventRecordWriter.append(
                    event: event, index: index, batchID: text, client: client, installHash: text,
                    receivedAt: Self.receivedAt, collector: text, to: &expected)
                var memory = [UInt8](repeating: 0xEE, count: writer.maxLength(of: compact))
                let written = memory.withUnsafeMutableBytes { writer.write(event: compact, index: index, into: $0) }
                #expect(Array(memory[..<written]) == expected, "record \(index)")
                let expectedKey = SeriesKey.bytes(appID: text, kind: event.kind, widgetType: event.widgetType)
                var key = [UInt8](repeating: 0xEE, count: writer.keyLength(of: compact))
                let keyLength = key.withUnsafeMutableBytes { writer.writeKey(of: compact, into: $0) }
                #expect(keyLength == key.count)
                #expect(key == expectedKey, "key \(index)")
            }
        }
    }
}
