import Gzip
import Testing

@testable import Collector

/// The spool's on-disk format alone: frames written by `SpoolBatch`, read back by `SpoolFormat`, and the start-up
/// scan of a segment with torn, damaged and missing parts.
@Suite struct SpoolFormatTests {
    static let headers = [
        SpoolRecord.Header(name: "content-type", value: Array("application/json".utf8)),
        SpoolRecord.Header(name: "empty", value: nil),
    ]

    static func batch(_ values: [String], keyed: Bool = true, appendedAt: Int64 = 1_764_000_000_000) -> SpoolBatch {
        var batch = SpoolBatch(topic: "flowmeter.events.v1", headers: headers, appendedAt: appendedAt)
        for (index, value) in values.enumerated() {
            let key: ArraySlice<UInt8>? = keyed && index % 2 == 0 ? Array("key-\(index)".utf8)[...] : nil
            batch.append(key: key, value: Array(value.utf8)[...])
        }
        batch.sealChecksums()
        return batch
    }

    /// A segment file's bytes: the header, then the frames of `batches`.
    static func segment(_ batches: [SpoolBatch]) -> [UInt8] {
        batches.reduce(SpoolFormat.segmentHeader) { $0 + $1.bytes }
    }

    static func records(in bytes: [UInt8], from start: Int = 0) -> [SpoolRecord] {
        bytes.withUnsafeBytes { buffer in
            var records: [SpoolRecord] = []
            var offset = start
            while case .record(let view) = SpoolFormat.frame(in: buffer, at: offset) {
                records.append(SpoolFormat.record(view, in: buffer))
                offset = view.end
            }
            return records
        }
    }

    @Test func theChecksumIsZlibsCRC32() {
        #expect(Gzip.crc32(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(Gzip.crc32([]) == 0)
    }

    @Test func framesReadBackAsWritten() {
        let batch = Self.batch(["{\"a\":1}", "", "{\"c\":3}"])
        let records = Self.records(in: batch.bytes)
        #expect(records.count == 3)
        #expect(records.map { String(decoding: $0.value, as: UTF8.self) } == ["{\"a\":1}", "", "{\"c\":3}"])
        #expect(records.map(\.key) == [Array("key-0".utf8), nil, Array("key-2".utf8)])
        #expect(records.allSatisfy { $0.topic == "flowmeter.events.v1" && $0.headers == Self.headers })
        #expect(records.allSatisfy { $0.appendedAt == 1_764_000_000_000 })
        #expect(batch.frameEnd(2) == batch.bytes.count)
    }

    /// The batch's own index of its frames (what the producer reads keys and values through) says where each key
    /// and value is: with and without keys, empty ones, and long ones; and an index entry is 16 bytes.
    @Test func theFrameIndexPointsAtEachKeyAndValue() {
        let keys: [[UInt8]?] = [Array("key-0".utf8), nil, [], Array(repeating: 0x6B, count: 3_000), nil, [0x00]]
        let values: [[UInt8]] = [Array("{\"a\":1}".utf8), [], Array(repeating: 0x76, count: 70_000), [0x7B], [], []]
        var batch = SpoolBatch(topic: "t", headers: Self.headers)
        for (key, value) in zip(keys, values) {
            batch.append(key: key?[...], value: value[...])
        }
        for index in keys.indices {
            #expect(batch.key(index).map { Array($0) } == keys[index], "key \(index)")
            #expect(Array(batch.value(index)) == values[index], "value \(index)")
        }
        batch.sealChecksums()
        let records = Self.records(in: batch.bytes)
        #expect(records.map(\.key) == keys)
        #expect(records.map(\.value) == values)
        #expect(MemoryLayout<SpoolBatch.Frame>.stride == 16)
    }

    @Test func anUnsealedOrAlteredFrameIsCorrupt() {
        var unsealed = SpoolBatch(topic: "t", headers: [])
        unsealed.append(key: nil, value: Array("value".utf8)[...])
        let frame = unsealed.bytes.withUnsafeBytes { SpoolFormat.frame(in: $0, at: 0) }
        #expect(frame == .corrupt)

        var altered = Self.batch(["value"]).bytes
        altered[altered.count - 1] ^= 0x01
        #expect(altered.withUnsafeBytes { SpoolFormat.frame(in: $0, at: 0) } == .corrupt)
    }

    @Test func aShortBufferIsIncompleteNotCorrupt() {
        let bytes = Self.batch(["a value of some length"]).bytes
        for cut in [3, 8, bytes.count - 1] {
            let frame = Array(bytes.prefix(cut)).withUnsafeBytes { SpoolFormat.frame(in: $0, at: 0) }
            guard case .incomplete(let needed) = frame else {
                Issue.record("cut at \(cut): \(frame)")
                continue
            }
            #expect(needed == (cut < 8 ? 8 : bytes.count))
        }
    }

    @Test func anImpossibleLengthIsCorrupt() {
        var bytes = Self.batch(["x"]).bytes
        bytes.replaceSubrange(0..<4, with: [0xFF, 0xFF, 0xFF, 0x7F])
        #expect(bytes.withUnsafeBytes { SpoolFormat.frame(in: $0, at: 0) } == .corrupt)
        bytes.replaceSubrange(0..<4, with: [3, 0, 0, 0])
        #expect(bytes.withUnsafeBytes { SpoolFormat.frame(in: $0, at: 0) } == .corrupt)
    }

    @Test func aSegmentScanCountsEveryRecord() {
        let bytes = Self.segment([Self.batch(["a", "b"]), Self.batch(["c"], appendedAt: 5)])
        let scan = bytes.withUnsafeBytes { SpoolSegmentScan(scanning: $0) }
        #expect(scan.hasHeader && !scan.hasTornTail && scan.damaged.isEmpty)
        #expect(scan.records == 3)
        #expect(scan.validEnd == bytes.count)
        #expect(scan.firstAppendedAt == 1_764_000_000_000)
    }

    @Test(arguments: [1, 7, 8, 20])
    func aTornTailIsFoundAndEverythingBeforeItKept(cutFromEnd: Int) {
        let whole = Self.segment([Self.batch(["first", "second"]), Self.batch(["third record, torn"])])
        let torn = Array(whole.dropLast(cutFromEnd))
        let scan = torn.withUnsafeBytes { SpoolSegmentScan(scanning: $0) }
        #expect(scan.hasTornTail)
        #expect(scan.records == 2)
        #expect(scan.damaged.isEmpty)
        #expect(Self.records(in: Array(torn[..<scan.validEnd]), from: SpoolFormat.segmentHeaderSize).count == 2)
    }

    @Test func aDamagedPayloadInTheMiddleCostsOnlyItsRecord() {
        let batches = [Self.batch(["first"]), Self.batch(["second, damaged"]), Self.batch(["third"])]
        var bytes = Self.segment(batches)
        let secondStart = SpoolFormat.segmentHeaderSize + batches[0].bytes.count
        bytes[secondStart + SpoolFormat.frameHeaderSize + 30] ^= 0xFF
        let scan = bytes.withUnsafeBytes { SpoolSegmentScan(scanning: $0) }
        #expect(scan.records == 2)
        #expect(scan.damaged == [secondStart..<(secondStart + batches[1].bytes.count)])
        #expect(!scan.hasTornTail)
    }

    @Test func aDamagedLengthInTheMiddleIsSkippedByLookingForTheNextFrame() {
        let batches = [Self.batch(["first"]), Self.batch(["second, damaged"]), Self.batch(["third", "fourth"])]
        var bytes = Self.segment(batches)
        let secondStart = SpoolFormat.segmentHeaderSize + batches[0].bytes.count
        bytes.replaceSubrange(secondStart..<secondStart + 4, with: [0x10, 0x00, 0x00, 0x00])
        let scan = bytes.withUnsafeBytes { SpoolSegmentScan(scanning: $0) }
        #expect(scan.records == 3)
        #expect(scan.damaged.count == 1)
        #expect(scan.damaged.first?.lowerBound == secondStart)
        #expect(scan.damaged.first?.upperBound == secondStart + batches[1].bytes.count)
    }

    @Test func emptyAndHeaderlessFilesHoldNoRecords() {
        let empty = [UInt8]().withUnsafeBytes { SpoolSegmentScan(scanning: $0) }
        #expect(!empty.hasHeader && empty.records == 0 && !empty.hasTornTail)
        let headerOnly = SpoolFormat.segmentHeader.withUnsafeBytes { SpoolSegmentScan(scanning: $0) }
        #expect(headerOnly.hasHeader && headerOnly.records == 0 && !headerOnly.hasTornTail)
        let tornHeader = Array(SpoolFormat.segmentHeader.prefix(5)).withUnsafeBytes { SpoolSegmentScan(scanning: $0) }
        #expect(!tornHeader.hasHeader && tornHeader.records == 0)
        let foreign = Array(repeating: UInt8(ascii: "x"), count: 64).withUnsafeBytes { SpoolSegmentScan(scanning: $0) }
        #expect(!foreign.hasHeader && foreign.records == 0)
    }
}
