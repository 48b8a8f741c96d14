import Gzip

/// The disk spool's file format: segment files of records, each framed by its length and a CRC-32.
///
/// A segment file starts with a 16-byte header: `FLWSPOOL`, the format version as a little-endian `UInt32` (1),
/// four zero bytes. Records follow back to back, each a frame (all integers little-endian):
///
/// ```
/// u32 payload length | u32 CRC-32 of the payload | payload
/// payload: i64 appendedAt (ms since 1970)
///          u16 topic length | topic
///          u16 header count | per header: u16 name length | name | i32 value length (-1: none) | value
///          i32 key length (-1: none) | key
///          u32 value length | value
/// ```
///
/// A frame is valid when its length is within bounds, the payload is all there, its checksum matches and its fields
/// fill the payload exactly. Nothing here knows Kafka: the format only carries what a producer needs.
enum SpoolFormat {
    /// The first eight bytes of every segment.
    static let magic: [UInt8] = Array("FLWSPOOL".utf8)
    /// The format version this code writes and reads.
    static let version: UInt32 = 1
    /// The segment header's size.
    static let segmentHeaderSize = 16
    /// The size of a frame's length and checksum.
    static let frameHeaderSize = 8
    /// The smallest valid payload: a time, an empty topic, no headers, no key, an empty value.
    static let minimumPayloadSize = 8 + 2 + 2 + 4 + 4
    /// The largest payload a frame may declare; larger lengths are corruption (Kafka messages are far smaller).
    static let maximumPayloadSize = 64 << 20

    /// The 16 bytes every segment file starts with.
    static var segmentHeader: [UInt8] {
        var header = magic
        appendInteger(version, to: &header)
        appendInteger(UInt32(0), to: &header)
        return header
    }

    /// Whether `bytes` start with a segment header this code can read.
    static func hasSegmentHeader(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count >= segmentHeaderSize else { return false }
        return bytes.prefix(magic.count).elementsEqual(magic) && integer(UInt32.self, in: bytes, at: 8) == version
    }

    /// What lies at one offset of a buffer read from a segment.
    enum Frame: Sendable, Hashable {
        /// A valid record.
        case record(SpoolRecordView)
        /// The buffer ends before the frame does; `needed` is the frame's size so far as it is known (the frame
        /// header's size when not even that is there). At the end of a file this is a torn write.
        case incomplete(needed: Int)
        /// Not a valid frame: an impossible length, a checksum mismatch, or fields that do not fill the payload.
        case corrupt
    }

    /// Decodes the frame at `offset` of `bytes`.
    static func frame(in bytes: UnsafeRawBufferPointer, at offset: Int) -> Frame {
        guard offset >= 0, offset + frameHeaderSize <= bytes.count else { return .incomplete(needed: frameHeaderSize) }
        let length = Int(integer(UInt32.self, in: bytes, at: offset))
        guard length >= minimumPayloadSize, length <= maximumPayloadSize else { return .corrupt }
        let payloadStart = offset + frameHeaderSize
        let end = payloadStart + length
        guard end <= bytes.count else { return .incomplete(needed: frameHeaderSize + length) }
        let checksum = integer(UInt32.self, in: bytes, at: offset + 4)
        guard Gzip.crc32(UnsafeRawBufferPointer(rebasing: bytes[payloadStart..<end])) == checksum else {
            return .corrupt
        }
        guard let record = fields(in: bytes, start: offset, payload: payloadStart..<end) else { return .corrupt }
        return .record(record)
    }

    /// The topic and headers of a record's metadata block (``SpoolRecordView/metadata``).
    static func metadata(in bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> (
        topic: String, headers: [SpoolRecord.Header]
    ) {
        var cursor = range.lowerBound
        let topicLength = Int(integer(UInt16.self, in: bytes, at: cursor))
        cursor += 2
        let topic = String(
            decoding: UnsafeRawBufferPointer(rebasing: bytes[cursor..<cursor + topicLength]), as: UTF8.self)
        cursor += topicLength
        let count = Int(integer(UInt16.self, in: bytes, at: cursor))
        cursor += 2
        var headers: [SpoolRecord.Header] = []
        headers.reserveCapacity(count)
        for _ in 0..<count {
            let nameLength = Int(integer(UInt16.self, in: bytes, at: cursor))
            cursor += 2
            let name = String(
                decoding: UnsafeRawBufferPointer(rebasing: bytes[cursor..<cursor + nameLength]), as: UTF8.self)
            cursor += nameLength
            let valueLength = Int(integer(Int32.self, in: bytes, at: cursor))
            cursor += 4
            var value: [UInt8]?
            if valueLength >= 0 {
                value = Array(bytes[cursor..<cursor + valueLength])
                cursor += valueLength
            }
            headers.append(SpoolRecord.Header(name: name, value: value))
        }
        return (topic, headers)
    }

    /// The owned record of a view over `bytes`.
    static func record(_ view: SpoolRecordView, in bytes: UnsafeRawBufferPointer) -> SpoolRecord {
        let (topic, headers) = metadata(in: bytes, view.metadata)
        return SpoolRecord(
            topic: topic, key: view.key.map { Array(bytes[$0]) }, value: Array(bytes[view.value]), headers: headers,
            appendedAt: view.appendedAt)
    }

    /// The metadata block of a batch: topic length, topic, header count, headers.
    static func metadataBlock(topic: String, headers: [SpoolRecord.Header]) -> [UInt8] {
        var block: [UInt8] = []
        appendInteger(UInt16(clamping: topic.utf8.count), to: &block)
        block.append(contentsOf: topic.utf8.prefix(Int(UInt16.max)))
        appendInteger(UInt16(clamping: headers.count), to: &block)
        for header in headers.prefix(Int(UInt16.max)) {
            appendInteger(UInt16(clamping: header.name.utf8.count), to: &block)
            block.append(contentsOf: header.name.utf8.prefix(Int(UInt16.max)))
            if let value = header.value {
                appendInteger(Int32(value.count), to: &block)
                block.append(contentsOf: value)
            } else {
                appendInteger(Int32(-1), to: &block)
            }
        }
        return block
    }

    /// Appends `value` little-endian.
    static func appendInteger<Value: FixedWidthInteger>(_ value: Value, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// The little-endian integer at `offset`; the caller has checked that it is in bounds.
    static func integer<Value: FixedWidthInteger>(_: Value.Type, in bytes: UnsafeRawBufferPointer, at offset: Int)
        -> Value
    {
        Value(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: Value.self))
    }

    // Walks a checksummed payload; nil when a length points outside it or the fields do not end where it does.
    private static func fields(in bytes: UnsafeRawBufferPointer, start: Int, payload: Range<Int>) -> SpoolRecordView? {
        var cursor = payload.lowerBound
        func take(_ count: Int) -> Range<Int>? {
            guard count >= 0, cursor + count <= payload.upperBound else { return nil }
            defer { cursor += count }
            return cursor..<cursor + count
        }
        guard let time = take(8) else { return nil }
        let appendedAt = integer(Int64.self, in: bytes, at: time.lowerBound)
        let metadataStart = cursor
        guard let topicLength = take(2) else { return nil }
        guard take(Int(integer(UInt16.self, in: bytes, at: topicLength.lowerBound))) != nil else { return nil }
        guard let headerCount = take(2) else { return nil }
        for _ in 0..<Int(integer(UInt16.self, in: bytes, at: headerCount.lowerBound)) {
            guard let nameLength = take(2) else { return nil }
            guard take(Int(integer(UInt16.self, in: bytes, at: nameLength.lowerBound))) != nil else { return nil }
            guard let valueLength = take(4) else { return nil }
            let length = Int(integer(Int32.self, in: bytes, at: valueLength.lowerBound))
            guard length >= -1, take(max(0, length)) != nil else { return nil }
        }
        let metadata = metadataStart..<cursor
        guard let keyLength = take(4) else { return nil }
        let keyCount = Int(integer(Int32.self, in: bytes, at: keyLength.lowerBound))
        guard keyCount >= -1, let key = take(max(0, keyCount)) else { return nil }
        guard let valueLength = take(4) else { return nil }
        guard let value = take(Int(integer(UInt32.self, in: bytes, at: valueLength.lowerBound))) else { return nil }
        guard cursor == payload.upperBound else { return nil }
        return SpoolRecordView(
            start: start, end: payload.upperBound, appendedAt: appendedAt, metadata: metadata,
            key: keyCount >= 0 ? key : nil, value: value)
    }
}
