/// A direct-mapped cache of a value computed from a string, for strings that come back again and again (the
/// decoders share their strings across batches): a lookup hashes the string's bytes a word at a time to pick a slot
/// and compares the string held there with `==`, so a collision costs a recomputation, never a wrong value.
///
/// The slot hash is cheap and not flood-resistant; it only picks a slot. `slots` entries, rounded up to a power of
/// two. Not thread-safe: keep one per lock. ``StringDigestCache`` and the rollups' normalized coding paths are built
/// on it.
public struct StringKeyedCache<Value: Sendable>: Sendable {
    @usableFromInline
    struct Entry: Sendable {
        /// The slot hash of `string`; 0 in an empty entry, which no string's hash is.
        @usableFromInline var key: UInt64
        @usableFromInline var string: String
        @usableFromInline var value: Value

        @usableFromInline
        init(key: UInt64, string: String, value: Value) {
            self.key = key
            self.string = string
            self.value = value
        }
    }

    // One array of entries: one bounds check and one cache line per lookup.
    @usableFromInline var entries: [Entry]
    @usableFromInline let shift: UInt64

    /// An empty cache with `slots` entries; `placeholder` fills the empty ones and is never returned.
    public init(slots: Int, placeholder: Value) {
        let count = max(1, slots).nextPowerOfTwo
        entries = [Entry](repeating: Entry(key: 0, string: "", value: placeholder), count: count)
        shift = UInt64(64 - count.trailingZeroBitCount)
    }

    /// `compute(string)`, from the cache when `string` is the one held in its slot; otherwise computed and kept there
    /// (a string without contiguous UTF-8, a bridged one, is computed and not kept).
    @inlinable
    public mutating func value(for string: String, computing compute: (String) -> Value) -> Value {
        guard let key = Self.slotKey(of: string) else { return compute(string) }
        // The top bits, as in the interner: a multiply carries input bits up, not down. Shifting by 64 gives 0.
        let slot = Int(truncatingIfNeeded: key >> shift)
        if entries[slot].key == key && entries[slot].string == string { return entries[slot].value }
        let value = compute(string)
        entries[slot] = Entry(key: key, string: string, value: value)
        return value
    }

    /// The value kept for `string`, when it is the string held in its slot; for a caller whose computation needs
    /// state the `computing` closure of ``value(for:computing:)`` cannot reach.
    @inlinable
    public func cached(_ string: String) -> Value? {
        guard let key = Self.slotKey(of: string) else { return nil }
        let slot = Int(truncatingIfNeeded: key >> shift)
        return entries[slot].key == key && entries[slot].string == string ? entries[slot].value : nil
    }

    /// Keeps `value` for `string` in its slot, replacing what was there (nothing for a string without contiguous
    /// UTF-8).
    @inlinable
    public mutating func keep(_ value: Value, for string: String) {
        guard let key = Self.slotKey(of: string) else { return }
        entries[Int(truncatingIfNeeded: key >> shift)] = Entry(key: key, string: string, value: value)
    }

    /// The slot hash of `string`'s UTF-8 bytes (never 0), or nil when they are not contiguous.
    @inlinable
    static func slotKey(of string: String) -> UInt64? {
        string.utf8.withContiguousStorageIfAvailable { bytes in
            bytes.isEmpty ? 1 : StringInterner.hash(UnsafeRawPointer(bytes.baseAddress!), count: bytes.count)
        }
    }
}
