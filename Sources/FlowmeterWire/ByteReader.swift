import FlowmeterModels

/// The fast path's JSON tokenizer over borrowed bytes: validates as it goes and never recurses.
///
/// Strict RFC 8259 with the three liberties Foundation's `JSONSerialization` takes, so both decode paths accept the
/// same documents: a leading UTF-8 byte order mark, one trailing comma after the last member or element, and numbers
/// of any length (only those that overflow a `Double` are rejected). Nesting deeper than 512 containers is rejected.
package struct ByteReader {
    /// The JSON type of a scanned value.
    package enum ValueType: UInt8 {
        case string, number, bool, null, array, object

        var name: String {
            switch self {
            case .string: return "string"
            case .number: return "number"
            case .bool: return "bool"
            case .null: return "null"
            case .array: return "array"
            case .object: return "object"
            }
        }
    }

    /// Where a scanned value sits: for strings the bytes between the quotes, for numbers the literal.
    package struct Slot {
        package var type: ValueType
        package var start: Int
        package var end: Int
        /// A string with backslash escapes, or a number with a fraction or exponent.
        package var flag: Bool
    }

    static let maximumDepth = 512

    package let base: UnsafePointer<UInt8>
    package let count: Int
    package var index: Int
    /// Reused for unescaping strings.
    var scratch: [UInt8] = []
    /// Reused container stack for skipping values (1 = object, 0 = array).
    var stack: [UInt8] = []

    package init(base: UnsafePointer<UInt8>, count: Int) {
        self.base = base
        self.count = count
        self.index = 0
        scratch.reserveCapacity(256)
        stack.reserveCapacity(64)
    }

    @inline(__always)
    func fail(_ reason: String) -> JSONSyntaxError {
        JSONSyntaxError(offset: index, reason: reason)
    }

    /// The byte at the cursor, or 0 at the end (0 is never valid JSON outside a string, so it fails naturally).
    @inline(__always)
    package var peek: UInt8 { index < count ? base[index] : 0 }

    /// Skips JSON whitespace. All of it is at or below 0x20, so the byte compact JSON has here (a quote, a digit, a
    /// brace) ends the loop after one comparison.
    @inline(__always)
    package mutating func skipWhitespace() {
        while index < count {
            let byte = base[index]
            guard byte <= 0x20, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 else { return }
            index += 1
        }
    }

    @inline(__always)
    mutating func expect(_ byte: UInt8) throws(JSONSyntaxError) {
        guard peek == byte else { throw fail("Expected '\(Character(Unicode.Scalar(byte)))'") }
        index += 1
    }

    // MARK: - Values

    /// Scans one value of any type at the cursor; containers are skipped. `depth` is the depth of the container
    /// holding the value.
    package mutating func scanValue(depth: Int) throws(JSONSyntaxError) -> Slot {
        let start = index
        switch peek {
        case UInt8(ascii: "\""):
            index += 1
            let escaped = try scanString()
            return Slot(type: .string, start: start + 1, end: index - 1, flag: escaped)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            let fractional = try scanNumber()
            return Slot(type: .number, start: start, end: index, flag: fractional)
        case UInt8(ascii: "t"):
            try scanLiteral("true")
            return Slot(type: .bool, start: start, end: index, flag: false)
        case UInt8(ascii: "f"):
            try scanLiteral("false")
            return Slot(type: .bool, start: start, end: index, flag: false)
        case UInt8(ascii: "n"):
            try scanLiteral("null")
            return Slot(type: .null, start: start, end: index, flag: false)
        case UInt8(ascii: "{"):
            try skipContainer(depth: depth + 1)
            return Slot(type: .object, start: start, end: index, flag: false)
        case UInt8(ascii: "["):
            try skipContainer(depth: depth + 1)
            return Slot(type: .array, start: start, end: index, flag: false)
        default:
            throw fail("Invalid value")
        }
    }

    mutating func scanLiteral(_ literal: StaticString) throws(JSONSyntaxError) {
        let length = literal.utf8CodeUnitCount
        guard count - index >= length else { throw fail("Invalid literal") }
        let bytes = literal.utf8Start
        for offset in 0..<length where base[index + offset] != bytes[offset] {
            throw fail("Invalid literal")
        }
        index += length
    }

    /// Skips the object or array at the cursor, which sits at `depth`; iterative, so hostile nesting cannot overflow
    /// the stack.
    mutating func skipContainer(depth startDepth: Int) throws(JSONSyntaxError) {
        var depth = startDepth
        guard depth <= Self.maximumDepth else { throw fail("Too many nested arrays or dictionaries") }
        stack.removeAll(keepingCapacity: true)
        stack.append(base[index] == UInt8(ascii: "{") ? 1 : 0)
        index += 1
        var mayClose = true
        while true {
            // At the start of a member or element (after an opening bracket or a comma).
            skipWhitespace()
            let inObject = stack[stack.count - 1] == 1
            let byte = peek
            if mayClose && byte == (inObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                index += 1
                stack.removeLast()
                depth -= 1
            } else {
                if inObject {
                    guard byte == UInt8(ascii: "\"") else { throw fail("Expected a key") }
                    index += 1
                    _ = try scanString()
                    skipWhitespace()
                    try expect(UInt8(ascii: ":"))
                    skipWhitespace()
                }
                let next = peek
                if next == UInt8(ascii: "{") || next == UInt8(ascii: "[") {
                    depth += 1
                    guard depth <= Self.maximumDepth else { throw fail("Too many nested arrays or dictionaries") }
                    stack.append(next == UInt8(ascii: "{") ? 1 : 0)
                    index += 1
                    mayClose = true
                    continue
                }
                _ = try scanValue(depth: depth)
            }
            // After a value: a comma, or the end of one or more containers.
            while true {
                if stack.isEmpty { return }
                skipWhitespace()
                let byte = peek
                if byte == UInt8(ascii: ",") {
                    index += 1
                    mayClose = true
                    break
                }
                let closer = stack[stack.count - 1] == 1 ? UInt8(ascii: "}") : UInt8(ascii: "]")
                guard byte == closer else { throw fail("Expected ',' or '\(Character(Unicode.Scalar(closer)))'") }
                index += 1
                stack.removeLast()
                depth -= 1
            }
        }
    }

    /// Scans a number literal; returns whether it has a fraction or exponent. Rejects literals that overflow a
    /// `Double`, as Foundation does.
    mutating func scanNumber() throws(JSONSyntaxError) -> Bool {
        let start = index
        if peek == UInt8(ascii: "-") { index += 1 }
        var magnitude = 0
        var sawNonZero = false
        let first = peek
        if first == UInt8(ascii: "0") {
            index += 1
        } else if first >= UInt8(ascii: "1") && first <= UInt8(ascii: "9") {
            sawNonZero = true
            while isDigit(peek) {
                index += 1
                magnitude += 1
            }
            magnitude -= 1
        } else {
            throw fail("Invalid number")
        }
        var fractional = false
        if peek == UInt8(ascii: ".") {
            fractional = true
            index += 1
            guard isDigit(peek) else { throw fail("Invalid number") }
            var position = 0
            while isDigit(peek) {
                position += 1
                if !sawNonZero && peek != UInt8(ascii: "0") {
                    sawNonZero = true
                    magnitude = -position
                }
                index += 1
            }
        }
        if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
            fractional = true
            index += 1
            var negative = false
            if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") {
                negative = peek == UInt8(ascii: "-")
                index += 1
            }
            guard isDigit(peek) else { throw fail("Invalid number") }
            var exponent = 0
            while isDigit(peek) {
                if exponent < 1_000_000 { exponent = exponent * 10 + Int(peek - 48) }
                index += 1
            }
            magnitude += negative ? -exponent : exponent
        }
        // Below 1e308 nothing can overflow; near it, let the correctly rounded parser decide.
        if sawNonZero && magnitude >= 308 {
            let literal = String(
                decoding: UnsafeBufferPointer(start: base + start, count: index - start), as: UTF8.self)
            if let value = Double(literal), value.isFinite {
                return fractional
            }
            throw JSONSyntaxError(offset: start, reason: "Number is not representable")
        }
        return fractional
    }

    @inline(__always)
    func isDigit(_ byte: UInt8) -> Bool { byte >= 48 && byte <= 57 }

    /// Scans a string body after its opening quote up to and including the closing quote; returns whether it holds
    /// escapes. Validates escapes, surrogate pairs and UTF-8.
    @inline(__always)
    mutating func scanString() throws(JSONSyntaxError) -> Bool {
        var escaped = false
        var position = index
        let end = count
        while true {
            position = nextStringCandidate(from: position)
            guard position < end else { break }
            let byte = base[position]
            if byte == UInt8(ascii: "\"") {
                index = position + 1
                return escaped
            }
            if byte == UInt8(ascii: "\\") {
                escaped = true
                index = position
                position = try scanEscape(at: position)
            } else if byte < 0x20 {
                index = position
                throw fail("Unescaped control character")
            } else if byte < 0x80 {
                position += 1
            } else {
                index = position
                position = try scanUTF8(at: position)
            }
        }
        index = end
        throw fail("Unterminated string")
    }

    /// The first position at or after `position` whose byte a string scan must look at one by one: a quote,
    /// backslash, control character or non-ASCII byte, or one of the last seven bytes (or `count`, past them all).
    /// Every byte before it is printable ASCII other than a quote or backslash. Never reads at or past `count`.
    ///
    /// Sixteen bytes at a time with SSE2 (three compares and two ors per block; non-ASCII bytes are negative as
    /// `Int8`, so one signed compare flags them with the control characters), then eight at a time in a word for
    /// the last 8 to 15 bytes. The vector code depends on the shape: the constants are typed vectors (a scalar
    /// operand or `any()` makes the compiler compare lane by lane) and the mask is read as two words, the lowest
    /// set byte of which is the first flagged one.
    @inline(__always)
    func nextStringCandidate(from start: Int) -> Int {
        var position = start
        let end = count
        let quotes = SIMD16<UInt8>(repeating: UInt8(ascii: "\""))
        let backslashes = SIMD16<UInt8>(repeating: UInt8(ascii: "\\"))
        let spaces = SIMD16<Int8>(repeating: 0x20)
        while position + 16 <= end {
            let block = UnsafeRawPointer(base + position).loadUnaligned(as: SIMD16<UInt8>.self)
            let flagged =
                (block .== quotes) .| (block .== backslashes)
                .| (unsafeBitCast(block, to: SIMD16<Int8>.self) .< spaces)
            let words = unsafeBitCast(flagged, to: SIMD2<UInt64>.self)
            if words[0] != 0 { return position + words[0].trailingZeroBitCount >> 3 }
            if words[1] != 0 { return position + 8 + words[1].trailingZeroBitCount >> 3 }
            position += 16
        }
        // The checks may report a false positive, which only sends that byte down the exact path.
        while position + 8 <= end {
            let word = UnsafeRawPointer(base + position).loadUnaligned(as: UInt64.self)
            let quote = word ^ 0x2222_2222_2222_2222
            let backslash = word ^ 0x5C5C_5C5C_5C5C_5C5C
            let special =
                ((quote &- 0x0101_0101_0101_0101) & ~quote)
                | ((backslash &- 0x0101_0101_0101_0101) & ~backslash)
                | (word &- 0x2020_2020_2020_2020) | word
            let flagged = special & 0x8080_8080_8080_8080
            // The lowest flagged byte is a real one (borrows only carry upward).
            if flagged != 0 { return position + flagged.trailingZeroBitCount >> 3 }
            position += 8
        }
        return position
    }

    func hex4(at position: Int) -> UInt32? {
        guard position + 4 <= count else { return nil }
        var value: UInt32 = 0
        for offset in 0..<4 {
            let byte = base[position + offset]
            let digit: UInt8
            switch byte {
            case 48...57: digit = byte - 48
            case 65...70: digit = byte - 55
            case 97...102: digit = byte - 87
            default: return nil
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    /// Validates the escape at `position` (a backslash); returns the position after it.
    func scanEscape(at position: Int) throws(JSONSyntaxError) -> Int {
        guard position + 1 < count else { throw fail("Unterminated string") }
        switch base[position + 1] {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
            UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            return position + 2
        case UInt8(ascii: "u"):
            guard let unit = hex4(at: position + 2) else { throw fail("Invalid \\u escape") }
            if unit >= 0xDC00 && unit <= 0xDFFF { throw fail("Unpaired low surrogate") }
            guard unit >= 0xD800 && unit <= 0xDBFF else { return position + 6 }
            guard position + 7 < count, base[position + 6] == UInt8(ascii: "\\"),
                base[position + 7] == UInt8(ascii: "u"), let low = hex4(at: position + 8), low >= 0xDC00,
                low <= 0xDFFF
            else { throw fail("Unpaired high surrogate") }
            return position + 12
        default:
            throw fail("Invalid escape")
        }
    }

    /// Validates one multi-byte UTF-8 sequence (RFC 3629: no overlongs, no surrogates, at most U+10FFFF).
    func scanUTF8(at position: Int) throws(JSONSyntaxError) -> Int {
        let lead = base[position]
        let length: Int
        var lower: UInt8 = 0x80
        var upper: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; lower = 0xA0
        case 0xE1...0xEC, 0xEE, 0xEF: length = 3
        case 0xED: length = 3; upper = 0x9F
        case 0xF0: length = 4; lower = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; upper = 0x8F
        default: throw fail("Invalid UTF-8")
        }
        guard position + length <= count else { throw fail("Invalid UTF-8") }
        let second = base[position + 1]
        guard second >= lower && second <= upper else { throw fail("Invalid UTF-8") }
        for offset in 2..<max(length, 2) where base[position + offset] & 0xC0 != 0x80 {
            throw fail("Invalid UTF-8")
        }
        return position + length
    }

    // MARK: - Materializing

    /// The unescaped bytes of a string slot, in `scratch`.
    mutating func unescape(_ slot: Slot) {
        scratch.removeAll(keepingCapacity: true)
        var position = slot.start
        while position < slot.end {
            let byte = base[position]
            guard byte == UInt8(ascii: "\\") else {
                scratch.append(byte)
                position += 1
                continue
            }
            let code = base[position + 1]
            position += 2
            switch code {
            case UInt8(ascii: "b"): scratch.append(0x08)
            case UInt8(ascii: "f"): scratch.append(0x0C)
            case UInt8(ascii: "n"): scratch.append(0x0A)
            case UInt8(ascii: "r"): scratch.append(0x0D)
            case UInt8(ascii: "t"): scratch.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = hex4(at: position)!
                position += 4
                if scalar >= 0xD800 && scalar <= 0xDBFF {
                    let low = hex4(at: position + 2)!
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    position += 6
                }
                appendUTF8(scalar)
            default: scratch.append(code)
            }
        }
    }

    mutating func appendUTF8(_ scalar: UInt32) {
        switch scalar {
        case 0..<0x80:
            scratch.append(UInt8(scalar))
        case 0x80..<0x800:
            scratch.append(UInt8(0xC0 | scalar >> 6))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        case 0x800..<0x10000:
            scratch.append(UInt8(0xE0 | scalar >> 12))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        default:
            scratch.append(UInt8(0xF0 | scalar >> 18))
            scratch.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        }
    }

    /// The string in `slot`, unescaped and truncated to `limit` scalars.
    package mutating func string(_ slot: Slot, limit: Int) -> String {
        if !slot.flag {
            let bytes = UnsafeRawBufferPointer(start: base + slot.start, count: slot.end - slot.start)
            let length = FieldLimits.truncatedLength(bytes, limit: limit)
            return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[0..<length]), as: UTF8.self)
        }
        unescape(slot)
        return scratch.withUnsafeBytes { bytes in
            let length = FieldLimits.truncatedLength(bytes, limit: limit)
            return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[0..<length]), as: UTF8.self)
        }
    }

    /// The bytes of an unescaped string slot, cut to `limit` scalars. Inline: it runs per interned value.
    @inline(__always)
    private func truncatedBytes(_ slot: Slot, limit: Int) -> UnsafeRawBufferPointer {
        let bytes = UnsafeRawBufferPointer(start: base + slot.start, count: slot.end - slot.start)
        return UnsafeRawBufferPointer(start: base + slot.start, count: FieldLimits.truncatedLength(bytes, limit: limit))
    }

    /// Like ``string(_:limit:)``, sharing repeated values through `interner`, with what ``IdentifierRule`` says of
    /// the string (remembered by the interner for a cached one).
    mutating func identifier(
        _ slot: Slot, limit: Int, interner: inout StringInterner
    ) -> (value: String, violation: IdentifierRule.Violation?) {
        guard !slot.flag else {
            let value = string(slot, limit: limit)
            return (value, IdentifierRule.violation(in: value))
        }
        return interner.identifier(truncatedBytes(slot, limit: limit))
    }

    /// Like ``string(_:limit:)``, as an index into a batch's `table`, sharing repeated values through `interner`
    /// (see ``StringInterner/index(_:table:)``).
    mutating func stringIndex(
        _ slot: Slot, limit: Int, interner: inout StringInterner, table: inout [String]
    ) -> Int32 {
        guard !slot.flag else {
            table.append(string(slot, limit: limit))
            return Int32(table.count - 1)
        }
        return interner.index(truncatedBytes(slot, limit: limit), table: &table)
    }

    /// Like ``identifier(_:limit:interner:)``, as an index into a batch's `table`; nothing is appended for a value
    /// that breaks the rule.
    mutating func identifierIndex(
        _ slot: Slot, limit: Int, interner: inout StringInterner, table: inout [String]
    ) -> (index: Int32, violation: IdentifierRule.Violation?) {
        guard !slot.flag else {
            let value = string(slot, limit: limit)
            if let violation = IdentifierRule.violation(in: value) { return (CompactEvent.absent, violation) }
            table.append(value)
            return (Int32(table.count - 1), nil)
        }
        return interner.identifierIndex(truncatedBytes(slot, limit: limit), table: &table)
    }

    /// Appends the bytes of the string in `slot`, unescaped and truncated to `limit` scalars (at most 16,383, so
    /// under 65,536 bytes), to `bytes` as an id of ``EventTable/idBytes`` when they are an identifier under
    /// ``IdentifierRule``; otherwise appends nothing and returns the violation.
    ///
    /// The bytes are those of ``string(_:limit:)``'s `String`: the scan validated the UTF-8 and the escapes (a lone
    /// surrogate fails the parse), unescaping writes valid UTF-8, and the cut falls between scalars, so decoding
    /// them into a `String` would repair nothing.
    mutating func appendIdentifier(
        _ slot: Slot, limit: Int, to bytes: inout [UInt8]
    ) -> IdentifierRule.Violation? {
        withBytes(slot) { unescaped in
            let value = UnsafeRawBufferPointer(
                rebasing: unescaped[0..<FieldLimits.truncatedLength(unescaped, limit: limit)])
            if let violation = IdentifierRule.violation(inUTF8: value) { return violation }
            _ = EventTable.appendID(value, to: &bytes)
            return nil
        }
    }

    /// Runs `body` over the unescaped bytes of a string slot without making a `String`.
    mutating func withBytes<R>(_ slot: Slot, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        if !slot.flag {
            return body(UnsafeRawBufferPointer(start: base + slot.start, count: slot.end - slot.start))
        }
        unescape(slot)
        return scratch.withUnsafeBytes(body)
    }

    /// The number in `slot` as an `Int` under Foundation's rule: integer literals must fit exactly; other literals
    /// go through `Double` and must be integral and in range.
    package func int(_ slot: Slot) -> Int? {
        // One digit (a count of 1): its value, which the loop below would reach the same.
        if slot.end - slot.start == 1 && !slot.flag { return Int(base[slot.start] &- UInt8(ascii: "0")) }
        if slot.flag {
            let literal = String(
                decoding: UnsafeBufferPointer(start: base + slot.start, count: slot.end - slot.start), as: UTF8.self)
            guard let value = Double(literal) else { return nil }
            return Int(exactly: value)
        }
        var position = slot.start
        let negative = base[position] == UInt8(ascii: "-")
        if negative { position += 1 }
        var value = 0
        while position < slot.end {
            let (times, overflowA) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowB) = times.subtractingReportingOverflow(Int(base[position] - 48))
            if overflowA || overflowB { return nil }
            value = sum
            position += 1
        }
        if negative { return value }
        return value == Int.min ? nil : -value
    }
}
