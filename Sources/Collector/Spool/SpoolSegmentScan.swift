/// What a segment file holds, found by checking every frame: the valid records, the damaged stretches between
/// them, and a torn tail.
///
/// The collector scans every segment it finds at start. It walks the file with ``step(in:at:limit:)``, the same
/// step the replay's reader takes, so both resync past damage the same way: a frame that fails its checksum, whose
/// length is impossible, or whose declared length runs past the end of the file (a damaged length field) is skipped
/// up to the next offset where a valid frame starts, so one damaged record costs only itself; damage with no valid
/// frame after it is a torn tail, what a crash in the middle of a write leaves. Records before any damage are never
/// lost, and neither are valid records after it.
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
            switch Self.step(in: bytes, at: offset, limit: bytes.count) {
            case .record(let record):
                records += 1
                if firstAppendedAt == nil { firstAppendedAt = record.appendedAt }
                offset = record.end
                validEnd = offset
            case .damaged(let next):
                damaged.append(offset..<next)
                offset = next
            case .needsBytes, .damagedToEnd:
                // The buffer is the whole file, so nothing more can be read: a torn tail.
                hasTornTail = true
                return
            }
        }
    }
}

extension SpoolSegmentScan {
    /// What a reader finds at one offset of a buffer read from a segment.
    enum Step: Sendable, Hashable {
        /// A valid record; the next frame starts at its `end`.
        case record(SpoolRecordView)
        /// A frame that may be valid runs past the end of the buffer but not past the limit: read this many bytes
        /// from the offset and look again.
        case needsBytes(Int)
        /// Damage up to this offset of the buffer: a valid frame starts there, or, in a buffer that does not reach
        /// the limit, the buffer's end leaves undecided whether one does.
        case damaged(resumeAt: Int)
        /// Damage with no valid frame after it up to the limit: a torn tail.
        case damagedToEnd
    }

    /// The step of a reader at `offset` of `bytes`, a buffer read from a segment whose readable bytes end at
    /// `limit` (in the buffer's coordinates, at least `bytes.count`; equal when the buffer holds all there is).
    ///
    /// The one place that decides what is a record, what is damage and where reading resumes after it: the
    /// start-up scan and the replay's reader both call it. A frame whose declared length would end past `limit`
    /// cannot be one the spool wrote (a group is synced as a whole): it is damage, and reading resyncs after it.
    static func step(in bytes: UnsafeRawBufferPointer, at offset: Int, limit: Int) -> Step {
        let reachesLimit = bytes.count >= limit
        switch SpoolFormat.frame(in: bytes, at: offset) {
        case .record(let record):
            return .record(record)
        case .incomplete(let needed):
            if !reachesLimit && offset + needed <= limit { return .needsBytes(needed) }
        case .corrupt:
            break
        }
        let resync = resynchronize(in: bytes, after: offset)
        if let next = resync.next { return .damaged(resumeAt: next) }
        if reachesLimit { return .damagedToEnd }
        return .damaged(resumeAt: resync.undecided)
    }

    /// The first offset after `offset` where a valid frame starts (`next`), and the first one where a frame may
    /// start that runs past the buffer's end, so only a longer read can tell (`undecided`).
    ///
    /// Tries the end the damaged frame declares first (a payload hit by a bad write usually keeps its length),
    /// then every later byte. Impossible lengths are rejected before any checksum is computed, so a scan over
    /// garbage costs little more than reading it.
    private static func resynchronize(in bytes: UnsafeRawBufferPointer, after offset: Int) -> (
        next: Int?, undecided: Int
    ) {
        let header = SpoolFormat.frameHeaderSize
        if offset + header <= bytes.count {
            let declared = Int(SpoolFormat.integer(UInt32.self, in: bytes, at: offset))
            let candidate = offset + header + declared
            if declared >= SpoolFormat.minimumPayloadSize, candidate < bytes.count, isFrame(in: bytes, at: candidate) {
                return (candidate, candidate)
            }
        }
        var candidate = offset + 1
        var undecided: Int?
        while candidate + header + SpoolFormat.minimumPayloadSize <= bytes.count {
            let length = Int(SpoolFormat.integer(UInt32.self, in: bytes, at: candidate))
            if length >= SpoolFormat.minimumPayloadSize, length <= SpoolFormat.maximumPayloadSize {
                if candidate + header + length <= bytes.count {
                    if isFrame(in: bytes, at: candidate) { return (candidate, candidate) }
                } else if undecided == nil {
                    undecided = candidate
                }
            }
            candidate += 1
        }
        return (nil, undecided ?? max(offset + 1, candidate))
    }

    private static func isFrame(in bytes: UnsafeRawBufferPointer, at offset: Int) -> Bool {
        if case .record = SpoolFormat.frame(in: bytes, at: offset) { return true }
        return false
    }
}
