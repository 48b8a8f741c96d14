import Foundation
import Gzip

/// The messages of one batch (an ingest request's events, or one rollup flush) as spool frames in one buffer.
///
/// Built once per batch, before anything is sent: the producer reads keys and values from its ``RecordBlock`` in
/// place, and when the batch has to be spooled the same bytes are written to disk after ``sealChecksums()``. Every
/// record of a batch shares a topic, its headers and the time it was accepted, so that part of each frame is copied
/// from one prepared preamble. Records are written straight into the block, which grows geometrically: no
/// allocation per record once its capacity is reserved.
struct SpoolBatch: Sendable {
    /// Where one record's key and value lie in ``bytes``.
    ///
    /// 16 bytes, so a batch's 50 of them (800 bytes) fit glibc's per-thread cache: as `Int`s and ranges they took
    /// 48 each, and that larger allocation, once per request, went through `malloc`'s locked path.
    struct Frame: Sendable, Hashable {
        private let storedStart: UInt32
        private let valueStart: UInt32
        private let valueEnd: UInt32
        /// -1 for a record without a key; the key ends where the value's length field starts.
        private let keyLength: Int32

        init(start: Int, key: Range<Int>?, value: Range<Int>) {
            precondition(value.upperBound <= Int(UInt32.max), "a batch's block is smaller than 4 GiB")
            precondition(
                key.map { $0.upperBound == value.lowerBound - 4 } ?? true, "the value's length field follows the key")
            storedStart = UInt32(start)
            valueStart = UInt32(value.lowerBound)
            valueEnd = UInt32(value.upperBound)
            keyLength = key.map { Int32($0.count) } ?? -1
        }

        /// Where the record's frame starts.
        var start: Int { Int(storedStart) }

        /// The key bytes, or `nil` for none.
        var key: Range<Int>? {
            guard keyLength >= 0 else { return nil }
            let end = Int(valueStart) - 4
            return (end - Int(keyLength))..<end
        }

        /// The value bytes.
        var value: Range<Int> { Int(valueStart)..<Int(valueEnd) }
    }

    /// The topic of every record.
    let topic: String
    /// The headers of every record.
    let headers: [SpoolRecord.Header]
    /// When the records were accepted, in milliseconds since 1970.
    let appendedAt: Int64
    /// The frames, back to back, as they go to disk; the producer reads keys and values from it in place.
    private(set) var block: RecordBlock
    /// One entry per record, in order.
    private(set) var frames: [Frame] = []
    /// Whether the checksums are filled in.
    private(set) var isSealed = false
    private let preamble: [UInt8]

    /// An empty batch for `topic` and `headers`, with room for `records` records of `bytesPerRecord` bytes each.
    init(
        topic: String, headers: [SpoolRecord.Header], appendedAt: Int64 = SpoolBatch.now(), records: Int = 0,
        bytesPerRecord: Int = 0
    ) {
        self.topic = topic
        self.headers = headers
        self.appendedAt = appendedAt
        var preamble: [UInt8] = []
        SpoolFormat.appendInteger(appendedAt, to: &preamble)
        preamble += SpoolFormat.metadataBlock(topic: topic, headers: headers)
        self.preamble = preamble
        frames.reserveCapacity(records)
        // Each append reserves its record's worst case (every byte escaped), so leave room for one of those past
        // the estimate: the block is then allocated once, not grown (and copied) at the last record.
        let estimate = records * (SpoolFormat.frameHeaderSize + preamble.count + 8 + bytesPerRecord)
        block = RecordBlock(capacity: estimate > 0 ? estimate + 8_192 : 0)
    }

    /// How many records the batch holds.
    var count: Int { frames.count }

    /// Whether it holds no record.
    var isEmpty: Bool { frames.isEmpty }

    /// A copy of the frames' bytes, as they go to disk (the spool writes ``block``'s own).
    var bytes: [UInt8] { Array(block.bytes) }

    /// How many bytes the frames take.
    var byteCount: Int { block.count }

    /// The key of record `index`, or nil for none; valid as long as the batch's block.
    func key(_ index: Int) -> UnsafeRawBufferPointer? {
        frames[index].key.map { block.bytes($0) }
    }

    /// The value of record `index`; valid as long as the batch's block.
    func value(_ index: Int) -> UnsafeRawBufferPointer {
        block.bytes(frames[index].value)
    }

    /// Appends a record; `key` nil for a record without a key. Invalidates the checksums.
    mutating func append(key: UnsafeRawBufferPointer?, value: UnsafeRawBufferPointer) {
        append(keyBound: key?.count, valueBound: value.count) { memory in
            guard let key else { return 0 }
            memory.copyMemory(from: key)
            return key.count
        } value: { memory in
            memory.copyMemory(from: value)
            return value.count
        }
    }

    /// Appends a record written in place: `key` writes at most `keyBound` bytes (nil for a record without a key)
    /// and `value` at most `valueBound`, each returning how many it wrote. No copy and, once the block has room, no
    /// allocation. Invalidates the checksums.
    mutating func append(
        keyBound: Int?, valueBound: Int, key writeKey: (UnsafeMutableRawBufferPointer) -> Int,
        value writeValue: (UnsafeMutableRawBufferPointer) -> Int
    ) {
        makeBlockUnique()
        let start = block.count
        var keyRange: Range<Int>?
        var valueRange = 0..<0
        // The whole frame in one reserved run, through a local pointer: appending field by field reserved and read
        // the block's properties (with their exclusivity checks) seven times per record.
        let bound = SpoolFormat.frameHeaderSize + preamble.count + 8 + (keyBound ?? 0) + valueBound
        block.append(upTo: bound) { memory in
            let base = memory.baseAddress!
            func store<Integer: FixedWidthInteger>(_ value: Integer, at offset: Int) {
                (base + offset).storeBytes(of: value.littleEndian, as: Integer.self)
            }
            // The frame's length and checksum, filled in below and by `sealChecksums()`.
            store(UInt32(0), at: 4)
            var position = SpoolFormat.frameHeaderSize
            preamble.withUnsafeBytes { preamble in
                (base + position).copyMemory(from: preamble.baseAddress!, byteCount: preamble.count)
            }
            position += preamble.count
            let keyLengthOffset = position
            position += 4
            if let keyBound {
                let written = writeKey(UnsafeMutableRawBufferPointer(start: base + position, count: keyBound))
                precondition(written >= 0 && written <= keyBound, "SpoolBatch: the key wrote past its bound")
                store(Int32(written), at: keyLengthOffset)
                keyRange = (start + position)..<(start + position + written)
                position += written
            } else {
                store(Int32(-1), at: keyLengthOffset)
            }
            let valueLengthOffset = position
            position += 4
            let written = writeValue(UnsafeMutableRawBufferPointer(start: base + position, count: valueBound))
            precondition(written >= 0 && written <= valueBound, "SpoolBatch: the value wrote past its bound")
            store(UInt32(written), at: valueLengthOffset)
            valueRange = (start + position)..<(start + position + written)
            position += written
            store(UInt32(position - SpoolFormat.frameHeaderSize), at: 0)
            return position
        }
        frames.append(Frame(start: start, key: keyRange, value: valueRange))
        isSealed = false
    }

    /// Appends a record from byte arrays or slices.
    mutating func append(key: ArraySlice<UInt8>?, value: ArraySlice<UInt8>) {
        value.withUnsafeBytes { value in
            if let key {
                key.withUnsafeBytes { key in append(key: key, value: value) }
            } else {
                append(key: nil, value: value)
            }
        }
    }

    /// Fills in every frame's CRC-32; needed before the bytes go to disk, not before they go to Kafka.
    mutating func sealChecksums() {
        guard !isSealed else { return }
        makeBlockUnique()
        for index in frames.indices {
            let start = frames[index].start
            let payload = block.bytes((start + SpoolFormat.frameHeaderSize)..<frameEnd(index))
            block.store(littleEndian: Gzip.crc32(payload), at: start + 4)
        }
        isSealed = true
    }

    /// Where the frame of record `index` ends.
    func frameEnd(_ index: Int) -> Int {
        index + 1 < frames.count ? frames[index + 1].start : block.count
    }

    // A block another holder shares (the producer reading it, a ticket keeping it) is never written: copy first.
    private mutating func makeBlockUnique() {
        if !isKnownUniquelyReferenced(&block) { block = block.copy() }
    }

    /// The current time in milliseconds since 1970.
    static func now() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded())
    }
}
