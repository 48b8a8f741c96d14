import Foundation
import Gzip

/// The messages of one batch (an ingest request's events, or one rollup flush) as spool frames in one buffer.
///
/// Built once per batch, before anything is sent: the producer is fed slices of it, and when the batch has to be
/// spooled the same bytes are written to disk after ``sealChecksums()``. Every record of a batch shares a topic,
/// its headers and the time it was accepted, so that part of each frame is copied from one prepared block. The
/// buffer grows geometrically: no allocation per record once its capacity is reserved.
struct SpoolBatch: Sendable {
    /// Where one record's key and value lie in ``bytes``.
    struct Frame: Sendable, Hashable {
        /// Where the record's frame starts.
        var start: Int
        /// The key bytes, or `nil` for none.
        var key: Range<Int>?
        /// The value bytes.
        var value: Range<Int>
    }

    /// The topic of every record.
    let topic: String
    /// The headers of every record.
    let headers: [SpoolRecord.Header]
    /// When the records were accepted, in milliseconds since 1970.
    let appendedAt: Int64
    /// The frames, back to back, as they go to disk.
    private(set) var bytes: [UInt8] = []
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
        if records > 0 {
            frames.reserveCapacity(records)
            bytes.reserveCapacity(records * (SpoolFormat.frameHeaderSize + preamble.count + 8 + bytesPerRecord))
        }
    }

    /// How many records the batch holds.
    var count: Int { frames.count }

    /// Whether it holds no record.
    var isEmpty: Bool { frames.isEmpty }

    /// Appends a record; `key` nil for a record without a key. Invalidates the checksums.
    mutating func append(key: UnsafeRawBufferPointer?, value: UnsafeRawBufferPointer) {
        let start = bytes.count
        let payloadLength = preamble.count + 4 + (key?.count ?? 0) + 4 + value.count
        SpoolFormat.appendInteger(UInt32(payloadLength), to: &bytes)
        SpoolFormat.appendInteger(UInt32(0), to: &bytes)
        bytes.append(contentsOf: preamble)
        var keyRange: Range<Int>?
        if let key {
            SpoolFormat.appendInteger(Int32(key.count), to: &bytes)
            keyRange = bytes.count..<bytes.count + key.count
            bytes.append(contentsOf: key)
        } else {
            SpoolFormat.appendInteger(Int32(-1), to: &bytes)
        }
        SpoolFormat.appendInteger(UInt32(value.count), to: &bytes)
        let valueRange = bytes.count..<bytes.count + value.count
        bytes.append(contentsOf: value)
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
        let frames = frames
        bytes.withUnsafeMutableBytes { buffer in
            for (index, frame) in frames.enumerated() {
                let end = index + 1 < frames.count ? frames[index + 1].start : buffer.count
                let payload = UnsafeRawBufferPointer(
                    rebasing: buffer[(frame.start + SpoolFormat.frameHeaderSize)..<end])
                let checksum = Gzip.crc32(payload)
                buffer.storeBytes(of: checksum.littleEndian, toByteOffset: frame.start + 4, as: UInt32.self)
            }
        }
        isSealed = true
    }

    /// Where the frame of record `index` ends.
    func frameEnd(_ index: Int) -> Int {
        index + 1 < frames.count ? frames[index + 1].start : bytes.count
    }

    /// The current time in milliseconds since 1970.
    static func now() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded())
    }
}
