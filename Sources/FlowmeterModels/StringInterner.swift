/// A small per-decode cache that hands out one shared `String` for repeated values (widget types, pages, releases),
/// so a batch of 50 events does not allocate the same string 50 times.
///
/// Direct-mapped, 64 entries; a collision just replaces the entry. Only strings too long for Swift's inline small-string
/// form (over 15 UTF-8 bytes) and short enough to be likely repeats are worth it.
struct StringInterner {
    private var hashes = [UInt64](repeating: 0, count: 64)
    private var strings = [String](repeating: "", count: 64)

    mutating func string(_ bytes: UnsafeRawBufferPointer) -> String {
        guard bytes.count > 15 && bytes.count <= 64 else { return String(decoding: bytes, as: UTF8.self) }
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3 }
        hash |= 1
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
}
