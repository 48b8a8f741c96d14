import FlowmeterModels

/// Writes bytes through a raw pointer into memory sized beforehand, for the ingest hot path.
///
/// Appending to `[UInt8]` byte by byte checks uniqueness and capacity on every call, which cost more than the JSON
/// itself; a sink writes with no checks at all, so its caller must size the memory from an upper bound first
/// (`EventRecordWriter.maxLength` and `SeriesKey.maxLength` give them).
struct ByteSink {
    private let base: UnsafeMutablePointer<UInt8>
    private(set) var position: Int

    init(_ base: UnsafeMutablePointer<UInt8>, position: Int = 0) {
        self.base = base
        self.position = position
    }

    /// What an escaped, quoted JSON string of `string` can take at most: every byte as `\u00XX`, plus quotes.
    static func maxQuotedLength(_ string: String) -> Int {
        maxQuotedLength(utf8Count: string.utf8.count)
    }

    /// The most bytes ``quoted(utf8:)`` writes for `utf8Count` bytes.
    static func maxQuotedLength(utf8Count: Int) -> Int {
        utf8Count * 6 + 2
    }

    /// The longest RFC 3339 time `timestamp` writes for years 0000–9999, with quotes.
    static let maxQuotedTimestampLength = 32
    /// The longest decimal `Int`, with its sign.
    static let maxIntLength = 20

    @inline(__always)
    mutating func byte(_ value: UInt8) {
        base[position] = value
        position += 1
    }

    @inline(__always)
    mutating func bytes(_ source: UnsafeRawBufferPointer) {
        guard let address = source.baseAddress else { return }
        Self.copy(address, to: UnsafeMutableRawPointer(base + position), count: source.count)
        position += source.count
    }

    /// Copies `count` bytes from `source` to `target`, as `memmove` would (the ranges may overlap).
    ///
    /// A record copies a dozen escaped strings and key fragments, most under 32 bytes; a call to `memmove` for each
    /// cost more than the copy. Up to 32 bytes are copied inline as two to four words loaded before any is stored,
    /// the last ones overlapping the first (so never outside either range); longer ones go to `memmove`.
    @inline(__always)
    static func copy(_ source: UnsafeRawPointer, to target: UnsafeMutableRawPointer, count: Int) {
        if count >= 8 {
            if count > 32 {
                target.copyMemory(from: source, byteCount: count)
            } else if count > 16 {
                let first = source.loadUnaligned(as: UInt64.self)
                let second = source.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
                let third = source.loadUnaligned(fromByteOffset: count - 16, as: UInt64.self)
                let fourth = source.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
                target.storeBytes(of: first, as: UInt64.self)
                target.storeBytes(of: second, toByteOffset: 8, as: UInt64.self)
                target.storeBytes(of: third, toByteOffset: count - 16, as: UInt64.self)
                target.storeBytes(of: fourth, toByteOffset: count - 8, as: UInt64.self)
            } else {
                let first = source.loadUnaligned(as: UInt64.self)
                let last = source.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
                target.storeBytes(of: first, as: UInt64.self)
                target.storeBytes(of: last, toByteOffset: count - 8, as: UInt64.self)
            }
        } else if count >= 4 {
            let first = source.loadUnaligned(as: UInt32.self)
            let last = source.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)
            target.storeBytes(of: first, as: UInt32.self)
            target.storeBytes(of: last, toByteOffset: count - 4, as: UInt32.self)
        } else if count > 0 {
            // One to three bytes: the first, the middle and the last (some the same).
            let first = source.load(as: UInt8.self)
            let middle = source.load(fromByteOffset: count >> 1, as: UInt8.self)
            let last = source.load(fromByteOffset: count - 1, as: UInt8.self)
            target.storeBytes(of: first, as: UInt8.self)
            target.storeBytes(of: middle, toByteOffset: count >> 1, as: UInt8.self)
            target.storeBytes(of: last, toByteOffset: count - 1, as: UInt8.self)
        }
    }

    @inline(__always)
    mutating func literal(_ text: StaticString) {
        bytes(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// `,"key":` (without the comma when `first`).
    @inline(__always)
    mutating func key(_ key: StaticString, first: Bool = false) {
        if !first { byte(UInt8(ascii: ",")) }
        byte(UInt8(ascii: "\""))
        literal(key)
        byte(UInt8(ascii: "\""))
        byte(UInt8(ascii: ":"))
    }

    mutating func quoted(_ string: String) {
        byte(UInt8(ascii: "\""))
        escaped(string)
        byte(UInt8(ascii: "\""))
    }

    /// The UTF-8 bytes `utf8` (valid UTF-8) as a JSON string: the same bytes as ``quoted(_:)`` of their `String`.
    mutating func quoted(utf8: UnsafeRawBufferPointer) {
        byte(UInt8(ascii: "\""))
        escaped(utf8)
        byte(UInt8(ascii: "\""))
    }

    /// `string` escaped per RFC 8259 (quote, backslash and control characters), without quotes.
    mutating func escaped(_ string: String) {
        let done: Void? = string.utf8.withContiguousStorageIfAvailable { escaped(UnsafeRawBufferPointer($0)) }
        if done == nil {
            var copy = string
            copy.withUTF8 { escaped(UnsafeRawBufferPointer($0)) }
        }
    }

    private mutating func escaped(_ utf8: UnsafeRawBufferPointer) {
        let count = utf8.count
        var runStart = 0
        var position = 0
        while let special = Self.nextToEscape(in: utf8, from: position) {
            bytes(UnsafeRawBufferPointer(rebasing: utf8[runStart..<special]))
            escape(utf8[special])
            position = special + 1
            runStart = position
        }
        bytes(UnsafeRawBufferPointer(rebasing: utf8[runStart..<count]))
    }

    /// The position of the first byte at or after `start` that needs escaping, or nil. Eight bytes at a time, the
    /// last (partial) word read as the string's final eight bytes, so almost no byte is looked at alone.
    @inline(__always)
    private static func nextToEscape(in utf8: UnsafeRawBufferPointer, from start: Int) -> Int? {
        let count = utf8.count
        var position = start
        while position < count {
            var candidate: Int?
            if position + 8 <= count {
                let mask = escapeMask(utf8.loadUnaligned(fromByteOffset: position, as: UInt64.self))
                guard mask != 0 else {
                    position += 8
                    continue
                }
                candidate = position + mask.trailingZeroBitCount >> 3
            } else if count >= 8 {
                // Bytes before `position` in this word were looked at already (one may be an escaped byte whose
                // borrow flags a neighbour): mask them off, and check what the mask finds.
                let skipped = position - (count - 8)
                let mask =
                    escapeMask(utf8.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)) & (~0 << (skipped * 8))
                guard mask != 0 else { return nil }
                candidate = count - 8 + mask.trailingZeroBitCount >> 3
            } else {
                candidate = position
            }
            let found = candidate!
            if needsEscape(utf8[found]) { return found }
            position = found + 1
        }
        return nil
    }

    @inline(__always)
    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    private mutating func escape(_ byte: UInt8) {
        self.byte(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): self.byte(byte)
        case 0x0A: self.byte(UInt8(ascii: "n"))
        case 0x0D: self.byte(UInt8(ascii: "r"))
        case 0x09: self.byte(UInt8(ascii: "t"))
        default:
            self.byte(UInt8(ascii: "u"))
            self.byte(48)
            self.byte(48)
            self.byte(Self.hexDigit(byte >> 4))
            self.byte(Self.hexDigit(byte & 0xF))
        }
    }

    // The high bit of each of the eight bytes that may be below 0x20, a quote or a backslash (the classic "has zero
    // byte" bit trick): the lowest flagged byte is always a real one, later ones may be borrows from it, and bytes of
    // 0x80 and up are never flagged.
    @inline(__always)
    private static func escapeMask(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let control = (word &- ones &* 0x20) & ~word & highs
        let quotes = word ^ (ones &* 0x22)
        let backslashes = word ^ (ones &* 0x5C)
        let quote = (quotes &- ones) & ~quotes & highs
        let backslash = (backslashes &- ones) & ~backslashes & highs
        return control | quote | backslash
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? 48 + value : UInt8(ascii: "a") + value - 10
    }

    mutating func int(_ value: Int) {
        if value < 0 {
            byte(UInt8(ascii: "-"))
            // Int.min has no positive counterpart, so print through its magnitude.
            unsigned(value.magnitude)
        } else {
            unsigned(UInt(value))
        }
    }

    mutating func unsigned(_ value: UInt) {
        var digits = 1
        var scale: UInt = 10
        while digits < 20 && value >= scale {
            digits += 1
            scale = scale &* 10
        }
        var rest = value
        var index = position + digits - 1
        repeat {
            base[index] = UInt8(48 + rest % 10)
            rest /= 10
            index -= 1
        } while index >= position
        position += digits
    }

    /// The RFC 3339 spelling (UTC, `Z`) in quotes, byte for byte what `Timestamp.appendRFC3339` writes.
    ///
    /// Two digits at a time from a table of the pairs `00`…`99`, and whole milliseconds (what the SDK sends) without
    /// the loop that strips a nine-digit fraction's trailing zeros: once per record, this was a tenth of writing it.
    mutating func quotedTimestamp(_ time: Timestamp) {
        byte(UInt8(ascii: "\""))
        datePrefix(time)
        secondsAndZone(of: time, minute: Timestamp.floorDiv(time.secondsSinceEpoch, 60))
    }

    /// The opening quote, date, hour and minute of a minute written through it (`"YYYY-MM-DDTHH:MM:`, 18 bytes),
    /// for ``quotedTimestamp(_:cache:)``. Only ever filled from a minute of the years 0000–9999.
    struct MinutePrefix {
        static let length = 18
        /// How many minutes a cache holds, direct-mapped by the minute's low bits: a batch's events usually span a
        /// few minutes, not in order.
        static let cacheSlots = 16
        var minute = Int64.min
        var head: UInt64 = 0
        var middle: UInt64 = 0
        var tail: UInt16 = 0
    }

    /// The first and last instants of the years 0000–9999, whose date prefix is always 18 bytes.
    private static let cachedRange: ClosedRange<Int64> = -62_167_219_200...253_402_300_799

    /// ``quotedTimestamp(_:)``, the date, hour and minute copied from `cache` (``MinutePrefix/cacheSlots`` entries)
    /// when it holds the time's minute, as it mostly does for a batch's events: the calendar arithmetic once per
    /// minute, not once per record.
    mutating func quotedTimestamp(_ time: Timestamp, cache slots: UnsafeMutablePointer<MinutePrefix>) {
        let minute = Timestamp.floorDiv(time.secondsSinceEpoch, 60)
        let target = UnsafeMutableRawPointer(base + position)
        let cache = slots + Int(truncatingIfNeeded: minute & Int64(MinutePrefix.cacheSlots - 1))
        if minute == cache.pointee.minute {
            target.storeBytes(of: cache.pointee.head, as: UInt64.self)
            target.storeBytes(of: cache.pointee.middle, toByteOffset: 8, as: UInt64.self)
            target.storeBytes(of: cache.pointee.tail, toByteOffset: 16, as: UInt16.self)
            position += MinutePrefix.length
        } else {
            byte(UInt8(ascii: "\""))
            datePrefix(time)
            if Self.cachedRange.contains(time.secondsSinceEpoch) {
                cache.pointee = MinutePrefix(
                    minute: minute, head: target.loadUnaligned(as: UInt64.self),
                    middle: target.loadUnaligned(fromByteOffset: 8, as: UInt64.self),
                    tail: target.loadUnaligned(fromByteOffset: 16, as: UInt16.self))
            }
        }
        secondsAndZone(of: time, minute: minute)
    }

    /// `YYYY-MM-DDTHH:MM:` of `time`.
    private mutating func datePrefix(_ time: Timestamp) {
        let days = Timestamp.floorDiv(time.secondsSinceEpoch, 86_400)
        let secondOfDay = Int(time.secondsSinceEpoch - days * 86_400)
        let (year, month, day) = Timestamp.civil(fromDays: days)
        // `digits` keeps the exact behaviour for a year outside 0...9999 (the low four digits), as appendRFC3339.
        if year >= 0 && year < 10_000 {
            pair(year / 100)
            pair(year % 100)
        } else {
            digits(year, count: 4)
        }
        byte(UInt8(ascii: "-"))
        pair(month)
        byte(UInt8(ascii: "-"))
        pair(day)
        byte(UInt8(ascii: "T"))
        let minuteOfDay = secondOfDay / 60
        pair(minuteOfDay / 60)
        byte(UInt8(ascii: ":"))
        pair(minuteOfDay % 60)
        byte(UInt8(ascii: ":"))
    }

    /// `SS`, the shortest fraction that keeps the value, `Z` and the closing quote; `minute` is the time's
    /// minutes since the epoch.
    private mutating func secondsAndZone(of time: Timestamp, minute: Int64) {
        pair(Int(time.secondsSinceEpoch - minute * 60))
        let nanoseconds = Int(time.nanoseconds)
        if nanoseconds != 0 {
            byte(UInt8(ascii: "."))
            let milliseconds = nanoseconds / 1_000_000
            if milliseconds * 1_000_000 == nanoseconds {
                // 1…999: one, two or three digits once the trailing zeros go.
                if milliseconds % 100 == 0 {
                    byte(UInt8(truncatingIfNeeded: 48 + milliseconds / 100))
                } else if milliseconds % 10 == 0 {
                    pair(milliseconds / 10)
                } else {
                    byte(UInt8(truncatingIfNeeded: 48 + milliseconds / 100))
                    pair(milliseconds % 100)
                }
            } else {
                var fraction = nanoseconds
                var count = 9
                while fraction % 10 == 0 {
                    fraction /= 10
                    count -= 1
                }
                digits(fraction, count: count)
            }
        }
        byte(UInt8(ascii: "Z"))
        byte(UInt8(ascii: "\""))
    }

    /// The ASCII pairs `00` to `99`, two bytes each.
    private static let pairs: StaticString = """
        00010203040506070809101112131415161718192021222324252627282930313233343536373839\
        40414243444546474849505152535455565758596061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899
        """

    /// Exactly two digits of `value`, which is in 0...99.
    @inline(__always)
    private mutating func pair(_ value: Int) {
        let source = UnsafeRawPointer(Self.pairs.utf8Start) + 2 * value
        UnsafeMutableRawPointer(base + position).copyMemory(from: source, byteCount: 2)
        position += 2
    }

    // As `Timestamp.appendDigits`: exactly `count` digits of a value below 10^count. Written from the last digit
    // back, dividing by the constant 10 (a multiply), not by a power of ten picked at run time (a hardware divide,
    // a few dozen cycles each, for every event's time).
    @inline(__always)
    private mutating func digits(_ value: Int, count: Int) {
        var rest = value
        var index = position + count
        position = index
        for _ in 0..<count {
            index -= 1
            base[index] = UInt8(truncatingIfNeeded: 48 + rest % 10)
            rest /= 10
        }
    }
}
