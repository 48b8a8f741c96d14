import Foundation
import Testing

@testable import FlowmeterModels
@testable import FlowmeterWire

@Suite struct EventRecordWriterTests {
    static let client = ClientInfo(
        appID: "com.example.shop", appVersion: "5.2.1 (5210)", platform: "ios",
        buildConfiguration: .debug)
    static let receivedAt = Timestamp(secondsSinceEpoch: 1_796_029_200, nanoseconds: 5_000)

    @Test func writerBytesDecodeToTheCodableRecord() throws {
        var buffer: [UInt8] = []
        for seed in 0..<10 as Range<UInt64> {
            let batch = SyntheticBatches.batchValue(seed: seed, events: 10)
            for (index, event) in batch.events.enumerated() {
                let record = EventRecord(
                    event: event, index: index, batchID: "B", client: batch.client,
                    installHash: seed % 2 == 0 ? "h\(seed)" : nil, receivedAt: Self.receivedAt, collector: "c-1")
                buffer.removeAll(keepingCapacity: true)
                EventRecordWriter.append(record, to: &buffer)
                #expect(try JSONDecoder().decode(EventRecord.self, from: Data(buffer)) == record)
                let viaCodable = try JSONDecoder().decode(EventRecord.self, from: JSONEncoder().encode(record))
                #expect(viaCodable == record)
            }
        }
    }

    @Test(arguments: BatchGenerator.oddStrings)
    func escapesEveryString(text: String) throws {
        let event = DiagnosticEvent(
            kind: .unknownType, widgetType: text, message: text,
            occurredAt: Timestamp(secondsSinceEpoch: 0))
        let record = EventRecord(
            event: event, index: 3, batchID: text, client: Self.client, installHash: text,
            receivedAt: Self.receivedAt, collector: text)
        var direct: [UInt8] = []
        EventRecordWriter.append(
            event: event, index: 3, batchID: text, client: Self.client, installHash: text,
            receivedAt: Self.receivedAt, collector: text, to: &direct)
        var viaRecord: [UInt8] = []
        EventRecordWriter.append(record, to: &viaRecord)
        #expect(direct == viaRecord)
        #expect(try JSONDecoder().decode(EventRecord.self, from: Data(direct)) == record)
        #expect(record.id == "\(text)/3")
    }

    @Test func seriesKeysAreUnambiguous() throws {
        let first = SeriesKey.bytes(appID: "a\",\"b", kind: .unknownType, widgetType: "c")
        let second = SeriesKey.bytes(appID: "a", kind: DiagnosticKind(rawValue: "b\",\"unknownType")!, widgetType: "c")
        #expect(first != second)
        let parts = try JSONDecoder().decode([String?].self, from: Data(first))
        #expect(parts == ["a\",\"b", "unknownType", "c"])
        #expect(
            String(decoding: SeriesKey.bytes(appID: "x", kind: .duplicateID, widgetType: nil), as: UTF8.self)
                == #"["x","duplicateID",null]"#)
    }

    /// A batch's keys written after its app's prefix, escaped once, are the bytes of the whole-key writer, at the
    /// bound, for odd app ids, kinds and widget types, with and without a type.
    @Test func keysAfterAnAppPrefixAreTheWholeKeys() {
        let odd = BatchGenerator.oddStrings.prefix(16)
        for appID in ["com.example.shop"] + odd {
            let prefix = SeriesKey.AppPrefix(appID: appID)
            for (index, text) in odd.enumerated() {
                let kind = DiagnosticKind(rawValue: text) ?? .unknownType
                let widgetType: String? = index % 4 == 3 ? nil : text
                let expected = SeriesKey.bytes(appID: appID, kind: kind, widgetType: widgetType)
                let bound = prefix.maxLength(kind: kind, widgetType: widgetType)
                #expect(bound <= SeriesKey.maxLength(appID: appID, kind: kind, widgetType: widgetType))
                var memory = [UInt8](repeating: 0xEE, count: bound)
                let written = memory.withUnsafeMutableBytes {
                    prefix.write(kind: kind, widgetType: widgetType, into: $0)
                }
                #expect(Array(memory[..<written]) == expected, "\(appID) \(text)")
            }
        }
    }
}

/// The per-batch writer the collector uses: its records decode to the `Codable` record, whatever the strings hold.
@Suite struct EventRecordBatchTests {
    @Test(arguments: [nil] + BatchGenerator.oddStrings.prefix(12).map { Optional($0) })
    func recordsDecodeToTheCodableRecord(odd: String?) throws {
        for seed in 0..<6 as Range<UInt64> {
            let batch = SyntheticBatches.batchValue(seed: seed, events: 12)
            var client = batch.client
            if let odd { client.appVersion = odd }
            let batchID = odd.map { "B/\($0)" } ?? "B-\(seed)"
            let installHash = seed % 2 == 0 ? "h\(seed)" : nil
            let receivedAt = Timestamp(secondsSinceEpoch: 1_796_029_200 + Int64(seed), nanoseconds: 7_000)
            let collector = odd ?? "c-1"
            let shared = EventRecordBatch(
                batchID: batchID, client: client, installHash: installHash, receivedAt: receivedAt,
                collector: collector)
            for (index, original) in batch.events.enumerated() {
                var event = original
                if let odd, index % 3 == 0 { event.message = odd }
                var memory = [UInt8](repeating: 0, count: shared.maxLength(of: event))
                let written = memory.withUnsafeMutableBytes { shared.write(event: event, index: index, into: $0) }
                let record = EventRecord(
                    event: event, index: index, batchID: batchID, client: client, installHash: installHash,
                    receivedAt: receivedAt, collector: collector)
                #expect(try JSONDecoder().decode(EventRecord.self, from: Data(memory[..<written])) == record)
            }
        }
    }
}
