/// Remembers the `hashValue` of strings seen again and again (the kinds and widget types of the rollups' and the
/// metrics' per-event keys), so a key can hash two remembered digests instead of hashing both strings' bytes.
///
/// Swift's `String` hashing costs about 400 instructions a string (SipHash over the bytes, behind the checks that
/// make canonically equivalent strings hash alike); a lookup here costs a word-at-a-time hash of the bytes to pick a
/// slot and a comparison with the string held there. The digest itself is still `hashValue`, SipHash keyed with the
/// process's random seed, so a key built from digests resists hash flooding as a key of strings does: the cheap hash
/// only picks a slot, and a collision there costs a miss, never a wrong digest.
///
/// Direct-mapped, `slots` entries (a power of two); not thread-safe: keep one per lock (the rollup shards, the
/// metrics cache).
public struct StringDigestCache: Sendable {
    private struct Entry {
        var key: UInt64 = 0
        var string = ""
        var digest = 0
    }

    // One array of entries, not three arrays: one bounds check and one cache line per lookup.
    private var entries: [Entry]
    private let shift: UInt64

    /// An empty cache with `slots` entries, rounded up to a power of two.
    public init(slots: Int = 256) {
        let count = max(1, slots).nextPowerOfTwo
        entries = [Entry](repeating: Entry(), count: count)
        shift = UInt64(64 - count.trailingZeroBitCount)
    }

    /// `string.hashValue`, from the cache when `string` is the one held in its slot.
    public mutating func digest(_ string: String) -> Int {
        guard let cheap = Self.slotKey(of: string) else { return string.hashValue }
        // The top bits, as in the interner: a multiply carries input bits up, not down.
        let slot = Int(truncatingIfNeeded: cheap >> shift)
        let held = entries[slot]
        if held.key == cheap && held.string == string { return held.digest }
        let digest = string.hashValue
        entries[slot] = Entry(key: cheap, string: string, digest: digest)
        return digest
    }

    /// A word-at-a-time hash of `string`'s UTF-8 bytes (never 0), or nil for a string that does not hold them
    /// contiguously (a bridged one): what a direct-mapped cache of strings picks a slot by, before it compares the
    /// string held there with `==`. Cheap, and not flood-resistant: use it to pick a slot, never as a key alone.
    public static func slotKey(of string: String) -> UInt64? {
        string.utf8.withContiguousStorageIfAvailable { bytes in
            bytes.isEmpty ? 1 : StringInterner.hash(UnsafeRawPointer(bytes.baseAddress!), count: bytes.count)
        }
    }
}
