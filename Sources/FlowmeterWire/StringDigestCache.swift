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
    private var cache: StringKeyedCache<Int>

    /// An empty cache with `slots` entries, rounded up to a power of two.
    public init(slots: Int = 256) {
        cache = StringKeyedCache(slots: slots, placeholder: 0)
    }

    /// `string.hashValue`, from the cache when `string` is the one held in its slot.
    public mutating func digest(_ string: String) -> Int {
        cache.value(for: string) { $0.hashValue }
    }
}
