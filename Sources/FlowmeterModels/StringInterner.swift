/// A cache that hands out one shared `String` for repeated values (widget types, coding paths, messages, releases),
/// so decoding does not allocate, validate and later free the same string again and again, and later comparisons of
/// two events' values (the rollup's series and samples) see the same storage and skip the bytes.
///
/// Direct-mapped; a collision just replaces the entry. Only strings too long for Swift's inline small-string form
/// (over 15 UTF-8 bytes) and short enough to be likely repeats (at most 128 bytes) are worth it, so an interner holds
/// at most `slots × 128` bytes of strings.
///
/// An interner made per batch (the default) saves only repeats within the batch. The collector keeps a few larger
/// ones and lends one to each decode (see ``InternerPool``), so the values every batch repeats are made once per
/// process. A hostile batch can only fill slots with its own values: the next batch misses there and makes its
/// strings, as without a cache; what the cache returns always spells the bytes asked for.
public struct StringInterner: Sendable {
    private var hashes: [UInt64]
    private var strings: [String]
    /// The slot is the hash's top bits (`64 - shift` of them): a multiply carries every input bit up, never down, so
    /// the low bits miss whatever differs in a word's last bytes (the digits of two coding paths).
    private let shift: UInt64

    /// An empty interner with `slots` entries, rounded up to a power of two (at least 1).
    public init(slots: Int = 64) {
        let count = max(1, slots).nextPowerOfTwo
        hashes = [UInt64](repeating: 0, count: count)
        strings = [String](repeating: "", count: count)
        shift = UInt64(64 - count.trailingZeroBitCount)
    }

    /// What a caller's variable holds while its interner is lent to a parser: shared, so lending allocates nothing,
    /// and never written to.
    static let lent = StringInterner(slots: 1)

    /// How many entries it has.
    public var slotCount: Int { hashes.count }

    mutating func string(_ bytes: UnsafeRawBufferPointer) -> String {
        guard bytes.count > 15 && bytes.count <= 128, let base = bytes.baseAddress else {
            return String(decoding: bytes, as: UTF8.self)
        }
        let hash = Self.hash(base, count: bytes.count)
        // Shifting a UInt64 by 64 gives 0 in Swift, so a one-slot interner always uses slot 0.
        let slot = Int(truncatingIfNeeded: hash >> shift)
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

    /// Eight bytes at a time, multiply-mixed; never 0 (an empty entry). Not for hostile-proof tables: a collision
    /// here costs only a miss.
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

extension Int {
    fileprivate var nextPowerOfTwo: Int {
        self <= 1 ? 1 : 1 << (Int.bitWidth - (self - 1).leadingZeroBitCount)
    }
}
