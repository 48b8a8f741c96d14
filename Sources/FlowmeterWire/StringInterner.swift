import FlowmeterModels

/// A cache that hands out one shared `String` for repeated values (widget types, coding paths, messages, releases),
/// so decoding does not allocate, validate and later free the same string again and again, and later comparisons of
/// two events' values (the rollup's series and samples) see the same storage and skip the bytes.
///
/// Two-way set-associative (see ``slot(for:)``); a miss replaces an entry. Strings of 1 to 128 UTF-8 bytes are cached (longer ones are
/// unlikely repeats), so an interner holds at most `slots × 128` bytes of strings. A cached short string (up to 15
/// bytes, Swift's inline form) saves no allocation but its UTF-8 validation, and every cached string remembers
/// whether it passed ``IdentifierRule``, so a repeated kind, widget type, page or release is checked once.
///
/// An interner made per batch (the default) saves only repeats within the batch. The collector keeps a few larger
/// ones and lends one to each decode (see ``InternerPool``), so the values every batch repeats are made once per
/// process. A hostile batch can only fill slots with its own values: the next batch misses there and makes its
/// strings, as without a cache; what the cache returns always spells the bytes asked for.
public struct StringInterner: Sendable {
    /// One slot: everything a lookup reads sits together, so a lookup touches one or two cache lines, not one in
    /// each of five arrays (what the interner cost at full load was mostly waiting for memory, measured with perf).
    struct Entry {
        /// The cached string's hash; 0 for an empty slot.
        var hash: UInt64 = 0
        var string = ""
        /// The index the string has in the current batch's table, valid while `stamp == batch`. So a value
        /// repeated through a batch is one table entry, found with the slot, with nothing to clear between batches.
        var batchIndex: Int32 = 0
        var stamp: UInt32 = 0
        /// 0 not checked, 1 an identifier under ``IdentifierRule``, 2 not one (checked again when asked).
        var verdict: UInt8 = 0
    }

    private var entries: [Entry]
    /// The slot is the hash's top bits (`64 - shift` of them): a multiply carries every input bit up, never down, so
    /// the low bits miss whatever differs in a word's last bytes (the digits of two coding paths).
    private let shift: UInt64
    /// 1, so a slot's neighbour is `slot ^ 1`; 0 for a one-slot interner, whose only slot is its own neighbour.
    private let neighbourMask: Int
    private var batch: UInt32 = 1

    /// An empty interner with `slots` entries, rounded up to a power of two (at least 1).
    public init(slots: Int = 64) {
        let count = max(1, slots).nextPowerOfTwo
        entries = [Entry](repeating: Entry(), count: count)
        shift = UInt64(64 - count.trailingZeroBitCount)
        neighbourMask = count > 1 ? 1 : 0
    }

    /// Starts a new batch's table: no index handed out before is handed out again.
    package mutating func beginBatch() {
        batch &+= 1
        if batch == 0 {
            // Once in 2^32 batches: forget every stamp rather than mistake an old one for this batch's.
            for slot in entries.indices { entries[slot].stamp = 0 }
            batch = 1
        }
    }

    /// The index in `table` of the string `bytes` spell, appended to it unless this batch already has it there.
    mutating func index(_ bytes: UnsafeRawBufferPointer, table: inout [String]) -> Int32 {
        guard let slot = slot(for: bytes) else {
            table.append(String(decoding: bytes, as: UTF8.self))
            return Int32(table.count - 1)
        }
        return index(ofSlot: slot, table: &table)
    }

    /// Like ``index(_:table:)``, with what ``IdentifierRule`` says of the string (see ``identifier(_:)``).
    mutating func identifierIndex(
        _ bytes: UnsafeRawBufferPointer, table: inout [String]
    ) -> (index: Int32, violation: IdentifierRule.Violation?) {
        guard let slot = slot(for: bytes) else {
            let value = String(decoding: bytes, as: UTF8.self)
            let violation = IdentifierRule.violation(in: value)
            if violation != nil { return (CompactEvent.absent, violation) }
            table.append(value)
            return (Int32(table.count - 1), nil)
        }
        if entries[slot].verdict != 1 {
            let violation = IdentifierRule.violation(in: entries[slot].string)
            entries[slot].verdict = violation == nil ? 1 : 2
            if let violation { return (CompactEvent.absent, violation) }
        }
        return (index(ofSlot: slot, table: &table), nil)
    }

    @inline(__always)
    private mutating func index(ofSlot slot: Int, table: inout [String]) -> Int32 {
        if entries[slot].stamp == batch { return entries[slot].batchIndex }
        table.append(entries[slot].string)
        let index = Int32(table.count - 1)
        entries[slot].stamp = batch
        entries[slot].batchIndex = index
        return index
    }

    /// What a caller's variable holds while its interner is lent to a parser: shared, so lending allocates nothing,
    /// and never written to.
    package static let lent = StringInterner(slots: 1)

    /// Whether some entry holds `value` (the privacy tests check that no install ID is ever cached).
    func holds(_ value: String) -> Bool {
        entries.contains { $0.string == value }
    }

    /// How many entries it has.
    public var slotCount: Int { entries.count }

    mutating func string(_ bytes: UnsafeRawBufferPointer) -> String {
        guard let slot = slot(for: bytes) else { return String(decoding: bytes, as: UTF8.self) }
        return entries[slot].string
    }

    /// The string `bytes` spell and what ``IdentifierRule`` says of it, the verdict remembered with a cached string.
    mutating func identifier(_ bytes: UnsafeRawBufferPointer) -> (value: String, violation: IdentifierRule.Violation?) {
        guard let slot = slot(for: bytes) else {
            let value = String(decoding: bytes, as: UTF8.self)
            return (value, IdentifierRule.violation(in: value))
        }
        let value = entries[slot].string
        if entries[slot].verdict == 1 { return (value, nil) }
        // Checked on the string, not the bytes: decoding repairs invalid UTF-8, and the rule applies to the result.
        let violation = IdentifierRule.violation(in: value)
        entries[slot].verdict = violation == nil ? 1 : 2
        return (value, violation)
    }

    /// The slot holding the string `bytes` spell, made and cached there if it was not; nil for bytes not cached
    /// (empty or over 128), with the string left to the caller.
    ///
    /// Two-way: a string may sit in its home slot (the hash's top bits) or the home's neighbour (`home ^ 1`), so two
    /// hot values whose hashes share a slot (with a hundred or so values in 1,024 slots, a few pairs do) both stay
    /// cached instead of replacing each other at every turn. A miss fills an empty one of the two (the home slot
    /// first), or else replaces the one last given a batch index in an earlier batch (by `stamp`), the neighbour on
    /// a tie.
    @inline(__always)
    private mutating func slot(for bytes: UnsafeRawBufferPointer) -> Int? {
        guard bytes.count > 0 && bytes.count <= 128, let base = bytes.baseAddress else { return nil }
        let hash = Self.hash(base, count: bytes.count)
        // Shifting a UInt64 by 64 gives 0 in Swift, so a one-slot interner always uses slot 0.
        let home = Int(truncatingIfNeeded: hash >> shift)
        if entries[home].hash == hash && entry(home, spells: bytes) { return home }
        let neighbour = home ^ neighbourMask
        if entries[neighbour].hash == hash && entry(neighbour, spells: bytes) { return neighbour }
        let replacesHome =
            entries[home].hash == 0
            || (entries[neighbour].hash != 0 && entries[home].stamp < entries[neighbour].stamp)
        let slot = replacesHome ? home : neighbour
        entries[slot] = Entry(hash: hash, string: String(decoding: bytes, as: UTF8.self))
        return slot
    }

    /// Whether the string in `slot` is the one `bytes` spell.
    @inline(__always)
    private func entry(_ slot: Int, spells bytes: UnsafeRawBufferPointer) -> Bool {
        let same = entries[slot].string.utf8.withContiguousStorageIfAvailable { utf8 in
            utf8.count == bytes.count && memoryEqual(utf8.baseAddress!, bytes.baseAddress, bytes.count)
        }
        return same == true
    }

    /// Sixteen bytes per multiply, never 0 (an empty entry). Not for hostile-proof tables: a collision here costs
    /// only a miss.
    ///
    /// Up to 16 bytes (nearly every kind, type, page and release) are read as two possibly overlapping words, the
    /// loads sized by the count (which is mixed in, so the two words and the count spell the bytes); longer values
    /// are mixed sixteen bytes at a time up to their last sixteen. Each step is a folded multiply (the high and low
    /// halves of a 128-bit product xored, as in wyhash), which carries every input bit into the top bits the slot is
    /// taken from.
    @inline(__always) @usableFromInline
    static func hash(_ base: UnsafeRawPointer, count: Int) -> UInt64 {
        var state = UInt64(truncatingIfNeeded: count) &* 0x9E37_79B9_7F4A_7C15
        let first: UInt64
        let second: UInt64
        if count > 16 {
            var offset = 0
            while offset + 16 < count {
                state = foldedMultiply(
                    state ^ base.loadUnaligned(fromByteOffset: offset, as: UInt64.self),
                    base.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self) ^ 0xBF58_476D_1CE4_E5B9)
                offset += 16
            }
            first = base.loadUnaligned(fromByteOffset: count - 16, as: UInt64.self)
            second = base.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
        } else if count >= 8 {
            first = base.loadUnaligned(as: UInt64.self)
            second = base.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
        } else if count >= 4 {
            first = UInt64(base.loadUnaligned(as: UInt32.self))
            second = UInt64(base.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self))
        } else if count > 0 {
            // One to three bytes: the first, the middle and the last (some the same byte) spell them.
            first =
                UInt64(base.load(as: UInt8.self)) << 16 | UInt64(base.load(fromByteOffset: count >> 1, as: UInt8.self))
                << 8 | UInt64(base.load(fromByteOffset: count - 1, as: UInt8.self))
            second = 0
        } else {
            first = 0
            second = 0
        }
        return foldedMultiply(state ^ first ^ 0x94D0_49BB_1331_11EB, second ^ 0xBF58_476D_1CE4_E5B9) | 1
    }

    /// The high and low halves of the full product, xored: every bit of either factor reaches the high half.
    @inline(__always)
    private static func foldedMultiply(_ left: UInt64, _ right: UInt64) -> UInt64 {
        let product = left.multipliedFullWidth(by: right)
        return product.high ^ product.low
    }
}

extension Int {
    /// The least power of two at or above this positive value (1 for 1 and below).
    var nextPowerOfTwo: Int {
        self <= 1 ? 1 : 1 << (Int.bitWidth - (self - 1).leadingZeroBitCount)
    }
}
