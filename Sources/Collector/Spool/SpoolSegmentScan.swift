/// What a segment file holds, found by checking every frame: the valid records, the damaged stretches between
/// them, and a torn tail.
///
/// The collector scans every segment it finds at start. A frame that fails its checksum (or whose length is
/// impossible) is skipped up to the next offset where a valid frame starts, so one damaged record costs only itself;
/// damage with no valid frame after it is a torn tail, what a crash in the middle of a write leaves. Records before
/// any damage are never lost.
struct SpoolSegmentScan: Sendable, Hashable {
    /// Whether the file starts with a segment header of this format.
    var hasHeader = false
    /// Valid records.
    var records = 0
    /// Valid bytes end here: the end of the last valid frame (or of the header).
    var validEnd = 0
    /// Damaged stretches between valid frames.
    var damaged: [Range<Int>] = []
    /// Whether bytes after `validEnd` form no frame: a torn write.
    var hasTornTail = false
    /// When the first valid record was accepted, in milliseconds since 1970.
    var firstAppendedAt: Int64?

    /// Scans the whole contents of a segment file.
    init(scanning bytes: UnsafeRawBufferPointer) {
        guard SpoolFormat.hasSegmentHeader(bytes) else {
            hasTornTail = !bytes.isEmpty
            return
        }
        hasHeader = true
        var offset = SpoolFormat.segmentHeaderSize
        validEnd = offset
        while offset < bytes.count {
            switch SpoolFormat.frame(in: bytes, at: offset) {
            case .record(let record):
                records += 1
                if firstAppendedAt == nil { firstAppendedAt = record.appendedAt }
                offset = record.end
                validEnd = offset
            case .incomplete:
                hasTornTail = true
                return
            case .corrupt:
                guard let next = Self.nextFrame(in: bytes, after: offset) else {
                    hasTornTail = true
                    return
                }
                damaged.append(offset..<next)
                offset = next
            }
        }
    }

    /// The first offset after `offset` where a valid frame starts, or nil.
    ///
    /// Tries the end the damaged frame declares first (a payload hit by a bad write usually keeps its length),
    /// then every later byte. Impossible lengths are rejected before any checksum is computed, so a scan over
    /// garbage costs little more than reading it.
    static func nextFrame(in bytes: UnsafeRawBufferPointer, after offset: Int) -> Int? {
        let header = SpoolFormat.frameHeaderSize
        if offset + header <= bytes.count {
            let declared = Int(SpoolFormat.integer(UInt32.self, in: bytes, at: offset))
            let candidate = offset + header + declared
            if declared >= SpoolFormat.minimumPayloadSize, candidate < bytes.count, isFrame(in: bytes, at: candidate) {
                return candidate
            }
        }
        var candidate = offset + 1
        while candidate + header + SpoolFormat.minimumPayloadSize <= bytes.count {
            let length = Int(SpoolFormat.integer(UInt32.self, in: bytes, at: candidate))
            if length >= SpoolFormat.minimumPayloadSize, candidate + header + length <= bytes.count,
                isFrame(in: bytes, at: candidate)
            {
                return candidate
            }
            candidate += 1
        }
        return nil
    }

    private static func isFrame(in bytes: UnsafeRawBufferPointer, at offset: Int) -> Bool {
        if case .record = SpoolFormat.frame(in: bytes, at: offset) { return true }
        return false
    }
}
