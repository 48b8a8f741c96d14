/// A small per-decode cache that hands out one shared `String` for repeated values (widget types, coding paths,
/// messages, pages, releases), so a batch of 50 events does not allocate the same string 50 times, and later
/// comparisons of two events' values (the rollup's series and samples) see the same storage and skip the bytes.
///
/// Direct-mapped, 64 entries; a collision just replaces the entry. Only strings too long for Swift's inline small-string
/// form (over 15 UTF-8 bytes) and short enough to be likely repeats (at most 128 bytes) are worth it. One interner
/// lives for one batch, so a hostile batch can only make its own decode miss the cache.
struct StringInterner {
    private var hashes = [UInt64](repeating: 0, count: 64)
    private var strings = [String](repeating: "", count: 64)

    mutating func string(_ bytes: UnsafeRawBufferPointer) -> String {
        guard bytes.count > 15 && bytes.count <= 128, let base = bytes.baseAddress else {
            return String(decoding: bytes, as: UTF8.self)
        }
        let hash = Self.hash(base, count: bytes.count)
        let slot = Int(hash & 63)
        if hashes[slot] == hash {
            var cached = strings[slot]
            let same = cached.withUTF8 { utf8 in
                utf8.count == bytes.count && memoryEqual(utf8.baseAddress!, bytes.baseAddress, bytes.count)
            }
            if same { return cached }
        }
        let made = String(decoding: bytes, as: UTF8.self)
        hashes[slot] = hash
        strings[slot] = made
        return made
    }

    /// Eight bytes at a time, multiply-mixed; never 0 (an empty entry). Not for hostile-proof tables: one batch's
    /// cache only, where a collision costs a miss.
    @inline(__always)
    static func hash(_ base: UnsafeRawPointer, count: Int) -> UInt64 {
        var hash = UInt64(truncatingIfNeeded: count) &* 0x9E37_79B9_7F4A_7C15
        var offset = 0
        while offset + 8 <= count {
            hash = (hash ^ base.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) &* 0xBF58_476D_1CE4_E5B9
            hash ^= hash >> 29
            offset += 8
        }
        if offset < count {
            // The last eight bytes (overlapping what was mixed): the string is over 15 bytes long.
            hash = (hash ^ base.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)) &* 0x94D0_49BB_1331_11EB
            hash ^= hash >> 31
        }
        return hash | 1
    }
}
