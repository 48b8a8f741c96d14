public import Foundation

/// An instant with nanosecond precision, parsed from and formatted as RFC 3339 without `DateFormatter`.
///
/// Accepted: `YYYY-MM-DDTHH:MM:SS`, optional `.fraction` (one or more digits; digits past the ninth are ignored),
/// then `Z` or `±hh:mm` (`T`/`Z` may be lower case). Rejected: impossible dates (month 13, February 30), leap seconds
/// (`:60`), and instants outside the years 0000–9999 once the offset is applied. Formatting always writes UTC with
/// `Z` and the shortest fraction that keeps the value, so decode → encode → decode is exact.
public struct Timestamp: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// Whole seconds since 1970-01-01T00:00:00Z.
    public let secondsSinceEpoch: Int64
    /// Nanoseconds past `secondsSinceEpoch`, in `0..<1_000_000_000`.
    public let nanoseconds: Int32

    /// Creates an instant; `nanoseconds` must be in `0..<1_000_000_000`.
    public init(secondsSinceEpoch: Int64, nanoseconds: Int32 = 0) {
        precondition(nanoseconds >= 0 && nanoseconds < 1_000_000_000, "nanoseconds out of range")
        self.secondsSinceEpoch = secondsSinceEpoch
        self.nanoseconds = nanoseconds
    }

    /// Creates an instant from a `Date`, rounded to the nearest microsecond (what a `Double` date can carry).
    public init(_ date: Date) {
        let micros = (date.timeIntervalSince1970 * 1_000_000).rounded()
        let whole = Int64((micros / 1_000_000).rounded(.down))
        let rest = Int64(micros) - whole * 1_000_000
        self.init(secondsSinceEpoch: whole, nanoseconds: Int32(rest * 1000))
    }

    /// Parses an RFC 3339 string; nil when it is not a valid RFC 3339 time.
    public init?(rfc3339 string: String) {
        var copy = string
        guard let parsed = copy.withUTF8({ Timestamp.parse(UnsafeRawBufferPointer($0)) }) else { return nil }
        self = parsed
    }

    /// The same instant as a `Date` (loses precision below about a microsecond).
    public var date: Date {
        Date(timeIntervalSince1970: Double(secondsSinceEpoch) + Double(nanoseconds) / 1e9)
    }

    /// The RFC 3339 spelling in UTC.
    public var rfc3339String: String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(30)
        appendRFC3339(to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A readable rendering for logs.
    public var description: String { rfc3339String }

    /// Orders earlier (or lower) values first.
    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        (lhs.secondsSinceEpoch, lhs.nanoseconds) < (rhs.secondsSinceEpoch, rhs.nanoseconds)
    }

    /// Decodes an RFC 3339 string.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let string = try container.decode(String.self)
        guard let parsed = Timestamp(rfc3339: string) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "Invalid RFC 3339 time '\(string)'")
        }
        self = parsed
    }

    /// Encodes the RFC 3339 spelling in UTC.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rfc3339String)
    }

    /// Appends the RFC 3339 spelling (UTC, `Z`) to `bytes`.
    public func appendRFC3339(to bytes: inout [UInt8]) {
        let days = Self.floorDiv(secondsSinceEpoch, 86_400)
        let secondOfDay = Int(secondsSinceEpoch - days * 86_400)
        let (year, month, day) = Self.civil(fromDays: days)
        Self.appendDigits(year, count: 4, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        Self.appendDigits(month, count: 2, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        Self.appendDigits(day, count: 2, to: &bytes)
        bytes.append(UInt8(ascii: "T"))
        Self.appendDigits(secondOfDay / 3600, count: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        Self.appendDigits(secondOfDay / 60 % 60, count: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        Self.appendDigits(secondOfDay % 60, count: 2, to: &bytes)
        if nanoseconds != 0 {
            bytes.append(UInt8(ascii: "."))
            var fraction = Int(nanoseconds)
            var digits = 9
            while fraction % 10 == 0 {
                fraction /= 10
                digits -= 1
            }
            Self.appendDigits(fraction, count: digits, to: &bytes)
        }
        bytes.append(UInt8(ascii: "Z"))
    }

    // MARK: - Parsing

    /// Parses RFC 3339 from UTF-8 bytes; the shared core of both decode paths.
    package static func parse(_ bytes: UnsafeRawBufferPointer) -> Timestamp? {
        guard bytes.count >= 20, let minute = parseMinute(bytes) else { return nil }
        return parse(bytes, minute: minute)
    }

    /// As ``parse(_:)``, reusing the date of the previous call when `bytes` start with the same 10 bytes
    /// (`YYYY-MM-DD`): the events of a batch nearly always share their date, while their minutes vary as much as the
    /// batch spans (a batch of events queued over ten minutes has ten), so only the hour and minute are read anew.
    package static func parse(_ bytes: UnsafeRawBufferPointer, cache: inout DatePrefixCache) -> Timestamp? {
        guard bytes.count >= 20, let base = bytes.baseAddress else { return nil }
        let head = base.loadUnaligned(as: UInt64.self)  // YYYY-MM-
        let middle = base.loadUnaligned(fromByteOffset: 8, as: UInt64.self)  // DDTHH:MM
        let day = UInt16(truncatingIfNeeded: middle)
        let midnight: Int64
        if cache.isFilled && cache.head == head && cache.day == day {
            midnight = cache.midnight
        } else {
            guard let parsed = parseDate(head, middle) else { return nil }
            cache = DatePrefixCache(isFilled: true, head: head, day: day, midnight: parsed)
            midnight = parsed
        }
        guard let time = parseTimeToTheMinute(middle, base.load(fromByteOffset: 16, as: UInt8.self)) else {
            return nil
        }
        return parse(bytes, minute: midnight + time)
    }

    /// The first 10 bytes (`YYYY-MM-DD`) of the last timestamp parsed through it, as the first word and the next
    /// two bytes, and the seconds since the epoch of that date's UTC midnight; only ever filled from a date that
    /// parsed.
    package struct DatePrefixCache {
        var isFilled = false
        var head: UInt64 = 0
        var day: UInt16 = 0
        var midnight: Int64 = 0

        package init() {}

        init(isFilled: Bool, head: UInt64, day: UInt16, midnight: Int64) {
            self.isFilled = isFilled
            self.head = head
            self.day = day
            self.midnight = midnight
        }
    }

    /// `YYYY-MM-DDTHH:MM:` of at least 20 bytes as seconds since the epoch, checked (month, day of the month, hour
    /// and minute in range); nil when it is not one.
    private static func parseMinute(_ bytes: UnsafeRawBufferPointer) -> Int64? {
        let head = bytes.loadUnaligned(as: UInt64.self)
        let middle = bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
        guard let midnight = parseDate(head, middle),
            let time = parseTimeToTheMinute(middle, bytes.load(fromByteOffset: 16, as: UInt8.self))
        else { return nil }
        return midnight + time
    }

    // The first sixteen bytes are checked as two words: the digits at once (see ``isDigits(_:_:)``), the separators
    // by comparison.

    /// The date of `YYYY-MM-` (`head`) and `DD` (the low two bytes of `middle`) as the seconds since the epoch of
    /// its UTC midnight, checked (month and day of the month in range); nil when it is not one.
    @inline(__always)
    private static func parseDate(_ head: UInt64, _ middle: UInt64) -> Int64? {
        let headDigits: UInt64 = 0x00FF_FF00_FFFF_FFFF
        guard isDigits(head, headDigits), isDigits(middle, 0xFFFF),
            head & ~headDigits == 0x2D00_002D_0000_0000  // - at 4 and 7
        else { return nil }
        let year = digit(head, 0) * 1000 + digit(head, 1) * 100 + digit(head, 2) * 10 + digit(head, 3)
        let month = digit(head, 5) * 10 + digit(head, 6)
        let day = digit(middle, 0) * 10 + digit(middle, 1)
        guard month >= 1 && month <= 12, day >= 1, day <= daysInMonth(year: year, month: month) else { return nil }
        return daysFromCivil(year: year, month: month, day: day) * 86_400
    }

    /// The seconds from midnight of `THH:MM` (bytes 2 to 7 of `middle`) followed by `colon`, checked (hour and
    /// minute in range); nil when it is not one.
    @inline(__always)
    private static func parseTimeToTheMinute(_ middle: UInt64, _ colon: UInt8) -> Int64? {
        guard isDigits(middle, 0xFFFF_00FF_FF00_0000),
            middle & 0x0000_FF00_00FF_0000 | 0x0000_0000_0020_0000 == 0x0000_3A00_0074_0000,  // T or t, then :
            colon == UInt8(ascii: ":")
        else { return nil }
        let hour = digit(middle, 3) * 10 + digit(middle, 4)
        let minute = digit(middle, 6) * 10 + digit(middle, 7)
        guard hour <= 23, minute <= 59 else { return nil }
        return Int64(hour * 3600 + minute * 60)
    }

    /// The digit in byte `index` (from the lowest) of `word`, which ``isDigits(_:_:)`` has checked.
    @inline(__always)
    private static func digit(_ word: UInt64, _ index: Int) -> Int {
        Int(truncatingIfNeeded: word >> UInt64(index * 8)) & 0x0F
    }

    /// Whether every byte of `word` that `mask` selects is an ASCII digit: its high nibble is 3, and adding 6 leaves
    /// it so (0x3A–0x3F carry out of the nibble, never out of the byte).
    @inline(__always)
    private static func isDigits(_ word: UInt64, _ mask: UInt64) -> Bool {
        let highNibbles = mask & 0xF0F0_F0F0_F0F0_F0F0
        let threes = mask & 0x3030_3030_3030_3030
        return word & highNibbles == threes
            && ((word & mask) &+ (mask & 0x0606_0606_0606_0606)) & highNibbles == threes
    }

    /// The rest of a timestamp of at least 20 bytes whose first 17 spell `minute`: seconds, fraction, zone.
    private static func parse(_ bytes: UnsafeRawBufferPointer, minute: Int64) -> Timestamp? {
        let count = bytes.count
        guard let second = digits(bytes, 17, 2), second <= 59 else { return nil }
        var index = 19
        var nanos = 0
        if bytes[index] == UInt8(ascii: ".") {
            index += 1
            let fractionStart = index
            while index < count, bytes[index] >= 48, bytes[index] <= 57 {
                if index - fractionStart < 9 { nanos = nanos * 10 + Int(bytes[index] - 48) }
                index += 1
            }
            let fractionDigits = index - fractionStart
            guard fractionDigits > 0 else { return nil }
            for _ in min(fractionDigits, 9)..<9 { nanos *= 10 }
        }
        guard index < count else { return nil }
        var offsetSeconds = 0
        switch bytes[index] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            index += 1
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            guard index + 6 == count, let offsetHour = digits(bytes, index + 1, 2),
                bytes[index + 3] == UInt8(ascii: ":"), let offsetMinute = digits(bytes, index + 4, 2),
                offsetHour <= 23, offsetMinute <= 59
            else { return nil }
            offsetSeconds = (offsetHour * 3600 + offsetMinute * 60) * (bytes[index] == UInt8(ascii: "+") ? 1 : -1)
            index += 6
        default:
            return nil
        }
        guard index == count else { return nil }
        let seconds = minute + Int64(second - offsetSeconds)
        // Years 0000–9999 in UTC, so formatting always writes four digits.
        guard seconds >= -62_167_219_200 && seconds <= 253_402_300_799 else { return nil }
        return Timestamp(secondsSinceEpoch: seconds, nanoseconds: Int32(nanos))
    }

    /// The decimal value of `length` ASCII digits at `start`, or nil when one is not a digit.
    @inline(__always)
    private static func digits(_ bytes: UnsafeRawBufferPointer, _ start: Int, _ length: Int) -> Int? {
        var value = 0
        for index in start..<(start + length) {
            let digit = Int(bytes[index]) &- 48
            guard digit >= 0 && digit <= 9 else { return nil }
            value = value * 10 + digit
        }
        return value
    }

    static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    // Howard Hinnant's days_from_civil / civil_from_days: exact for the proleptic Gregorian calendar.
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = floorDiv(y, 400)
        let yearOfEra = y - era * 400
        let m = Int64(month)
        let dayOfYear = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    package static func civil(fromDays days: Int64) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = floorDiv(z, 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (Int(year), Int(month), Int(day))
    }

    package static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
        a >= 0 ? a / b : (a - b + 1) / b
    }

    static func appendDigits(_ value: Int, count: Int, to bytes: inout [UInt8]) {
        var divisor = 1
        for _ in 1..<count { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            bytes.append(UInt8(48 + rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }
}
