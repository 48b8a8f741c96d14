import FlowmeterModels

/// Remembers the normalized form (``RollupSample/normalizedPath(_:)``) of coding paths seen again and again, so a
/// new series' first sample reuses the normalized string instead of building one.
///
/// The decoders share their strings across batches (the collector's interners), so the same few hundred coding
/// paths come back as the same `String`s; normalizing one walks its bytes and allocates twice (a byte buffer and the
/// new string), a lookup here hashes its bytes a word at a time and compares it with the string held in the slot.
/// Direct-mapped, `slots` entries (a power of two); a collision costs a miss, never a wrong path. Not thread-safe:
/// keep one per lock (each aggregator shard holds one).
struct NormalizedPathCache {
    private struct Entry {
        var key: UInt64 = 0
        var raw = ""
        var normalized = ""
    }

    private var entries: [Entry]
    private let shift: UInt64

    /// An empty cache with `slots` entries, rounded up to a power of two.
    init(slots: Int = 256) {
        var count = 1
        while count < slots { count <<= 1 }
        entries = [Entry](repeating: Entry(), count: count)
        shift = UInt64(64 - count.trailingZeroBitCount)
    }

    /// `RollupSample.normalizedPath(raw)`, from the cache when `raw` is the path held in its slot.
    mutating func normalized(_ raw: String) -> String {
        guard let key = StringDigestCache.slotKey(of: raw) else { return RollupSample.normalizedPath(raw) }
        // The top bits: the hash's multiplies carry its input up, not down.
        let slot = Int(truncatingIfNeeded: key >> shift)
        if entries[slot].key == key && entries[slot].raw == raw { return entries[slot].normalized }
        let normalized = RollupSample.normalizedPath(raw)
        entries[slot] = Entry(key: key, raw: raw, normalized: normalized)
        return normalized
    }
}
