import FlowmeterModels
import FlowmeterWire
import Foundation
import Testing

@testable import FlowmeterReporter

/// The batch file: append-only lines that a kill can only tear at the end.
@Suite struct BatchFileFormatTests {
    static let client = Array(#"{"appID":"com.example.shop","appVersion":"5.2.1","platform":"ios"}"#.utf8)

    static func file(events: Int) -> [UInt8] {
        var bytes = BatchFileFormat.header(clientJSON: client)
        for index in 0..<events {
            BatchFileFormat.appendEvent(
                DiagnosticEvent(
                    id: "e-\(index)", kind: .unknownType, widgetType: "w\(index)",
                    message: "quote \" and newline \n", occurredAt: Timestamp(secondsSinceEpoch: 1_796_025_600)),
                count: 1, to: &bytes)
        }
        BatchFileFormat.appendIncrement(index: 0, count: 4, to: &bytes)
        BatchFileFormat.appendDecodes(7, to: &bytes)
        return bytes
    }

    @Test func readsBackWhatWasAppended() throws {
        let batch = try #require(BatchFileFormat.parse(Self.file(events: 3)))
        #expect(batch.client == Self.client)
        #expect(batch.events.map(\.count) == [5, 1, 1])
        #expect(batch.decodes == 7)
        #expect(batch.occurrences == 7)
    }

    @Test func aTornLastLineIsIgnoredAndTheRestKept() throws {
        let whole = Self.file(events: 3)
        var torn = whole
        BatchFileFormat.appendEvent(
            DiagnosticEvent(kind: .duplicateID, occurredAt: Timestamp(secondsSinceEpoch: 0)), count: 1, to: &torn)
        torn.removeLast(9)
        let batch = try #require(BatchFileFormat.parse(torn))
        #expect(batch == BatchFileFormat.parse(whole))
    }

    @Test func withoutAWholeHeaderThereIsNothingToSend() {
        #expect(BatchFileFormat.parse(Array(#"H{"appID":"#.utf8)) == nil)
        #expect(BatchFileFormat.parse([]) == nil)
    }

    @Test func theUploadBodyIsWhatTheCollectorDecodes() throws {
        var batch = try #require(BatchFileFormat.parse(Self.file(events: 3)))
        var report = DiscardCounts()
        report.add(12, for: .queueOverflow)
        report.add(1, for: .payloadTooLarge)
        batch.report = report
        let body = UploadBody.make(id: "B-1", sentAt: Timestamp(secondsSinceEpoch: 1_796_025_601), batch: batch)
        let decoded = try FastBatchDecoder.decode(body)
        #expect(decoded.dropped.isEmpty)
        #expect(decoded.batch.id == "B-1")
        #expect(decoded.batch.decodes == 7)
        #expect(decoded.batch.events.map(\.count) == [5, 1, 1])
        #expect(decoded.batch.events.map(\.id) == ["e-0", "e-1", "e-2"])
        #expect(decoded.batch.events[0].message == "quote \" and newline \n")
        #expect(try CodableBatchDecoder.decode(Data(body)) == decoded)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
        let discarded = (object["clientReport"] as? [String: Any])?["discarded"] as? [[String: Any]]
        #expect(discarded?.count == 2)
        #expect(discarded?.first?["reason"] as? String == "queue_overflow")
        #expect(discarded?.first?["events"] as? Int == 12)
    }

    @Test func halvesSplitTheEventsAndKeepDecodesAndReportOnce() throws {
        let batch = try #require(BatchFileFormat.parse(Self.file(events: 5)))
        let (first, second) = batch.halves()
        #expect(first.events.count == 2 && second.events.count == 3)
        #expect(first.decodes == 7 && second.decodes == 0)
        #expect(BatchFileFormat.parse(BatchFileFormat.file(of: second)) == second)
    }

    @Test func fileNamesCarryTheAgeAndTheID() {
        var isOpen = false
        let name = BatchFileName(createdAt: 1_796_025_600_123, id: "5D0C3B7A-9E21-4F6B-8A3C-2E1F0D9C8B7A")
        #expect(name.sealedName == "1796025600123-5D0C3B7A-9E21-4F6B-8A3C-2E1F0D9C8B7A.batch")
        #expect(BatchFileName(name.sealedName, isOpen: &isOpen) == name && !isOpen)
        #expect(BatchFileName(name.openName, isOpen: &isOpen) == name && isOpen)
        #expect(BatchFileName(name.half("a").sealedName, isOpen: &isOpen)?.id == name.id + "-a")
        #expect(BatchFileName("notes.txt", isOpen: &isOpen) == nil)
        #expect(BatchFileName("12-../etc.batch", isOpen: &isOpen) == nil)
    }
}
