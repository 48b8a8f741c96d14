/// Whether stored bytes are one well-formed JSON object in valid UTF-8 (RFC 8259, no lone surrogate escapes), so that
/// a line damaged on disk is dropped instead of being spliced into an upload the collector would refuse whole.
///
/// Plain Swift over bytes, the same on every platform (Foundation's parsers differ between Linux and Apple ones on
/// edge cases). Nesting deeper than ``maxDepth`` counts as damage: the SDK writes flat objects.
struct JSONValidator {
    static let maxDepth = 32

    private let bytes: [UInt8]
    private var index: Int
    private let end: Int

    /// True when `bytes` is exactly one JSON object, with nothing but JSON whitespace around it.
    static func isObject(_ bytes: ArraySlice<UInt8>) -> Bool {
        var validator = JSONValidator(bytes: Array(bytes))
        validator.skipWhitespace()
        guard validator.peek() == UInt8(ascii: "{"), validator.value(depth: 0) else { return false }
        validator.skipWhitespace()
        return validator.index == validator.end
    }

    private init(bytes: [UInt8]) {
        self.bytes = bytes
        index = 0
        end = bytes.count
    }

    private func peek() -> UInt8? { index < end ? bytes[index] : nil }

    private mutating func skipWhitespace() {
        while let byte = peek(), byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
    }

    private mutating func consume(_ byte: UInt8) -> Bool {
        guard peek() == byte else { return false }
        index += 1
        return true
    }

    private mutating func literal(_ text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard end - index >= count else { return false }
        for offset in 0..<count where bytes[index + offset] != text.utf8Start[offset] { return false }
        index += count
        return true
    }

    private mutating func value(depth: Int) -> Bool {
        guard depth < Self.maxDepth, let byte = peek() else { return false }
        switch byte {
        case UInt8(ascii: "{"): return object(depth: depth)
        case UInt8(ascii: "["): return array(depth: depth)
        case UInt8(ascii: "\""): return string()
        case UInt8(ascii: "t"): return literal("true")
        case UInt8(ascii: "f"): return literal("false")
        case UInt8(ascii: "n"): return literal("null")
        default: return number()
        }
    }

    private mutating func object(depth: Int) -> Bool {
        index += 1
        skipWhitespace()
        if consume(UInt8(ascii: "}")) { return true }
        while true {
            skipWhitespace()
            guard peek() == UInt8(ascii: "\""), string() else { return false }
            skipWhitespace()
            guard consume(UInt8(ascii: ":")) else { return false }
            skipWhitespace()
            guard value(depth: depth + 1) else { return false }
            skipWhitespace()
            if consume(UInt8(ascii: "}")) { return true }
            guard consume(UInt8(ascii: ",")) else { return false }
        }
    }

    private mutating func array(depth: Int) -> Bool {
        index += 1
        skipWhitespace()
        if consume(UInt8(ascii: "]")) { return true }
        while true {
            skipWhitespace()
            guard value(depth: depth + 1) else { return false }
            skipWhitespace()
            if consume(UInt8(ascii: "]")) { return true }
            guard consume(UInt8(ascii: ",")) else { return false }
        }
    }

    private mutating func number() -> Bool {
        _ = consume(UInt8(ascii: "-"))
        if consume(UInt8(ascii: "0")) {
        } else if digits() == 0 {
            return false
        }
        if consume(UInt8(ascii: ".")), digits() == 0 { return false }
        if consume(UInt8(ascii: "e")) || consume(UInt8(ascii: "E")) {
            if !consume(UInt8(ascii: "+")) { _ = consume(UInt8(ascii: "-")) }
            if digits() == 0 { return false }
        }
        return true
    }

    private mutating func digits() -> Int {
        let start = index
        while let byte = peek(), byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") { index += 1 }
        return index - start
    }

    private mutating func string() -> Bool {
        index += 1
        while let byte = peek() {
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                return true
            case UInt8(ascii: "\\"):
                guard escape() else { return false }
            case 0..<0x20:
                return false
            case 0x80...:
                guard multiByte(lead: byte) else { return false }
            default:
                continue
            }
        }
        return false
    }

    private mutating func escape() -> Bool {
        guard let byte = peek() else { return false }
        index += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
            UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            return true
        case UInt8(ascii: "u"):
            guard let unit = hex4() else { return false }
            if (0xDC00...0xDFFF).contains(unit) { return false }
            guard (0xD800...0xDBFF).contains(unit) else { return true }
            guard literal("\\u"), let low = hex4() else { return false }
            return (0xDC00...0xDFFF).contains(low)
        default:
            return false
        }
    }

    private mutating func hex4() -> Int? {
        guard end - index >= 4 else { return nil }
        var value = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = value * 16 + Int(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = value * 16 + Int(byte - UInt8(ascii: "a")) + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): value = value * 16 + Int(byte - UInt8(ascii: "A")) + 10
            default: return nil
            }
        }
        return value
    }

    /// The rest of a UTF-8 sequence after its lead byte: no overlong forms, no surrogates, nothing past U+10FFFF.
    private mutating func multiByte(lead: UInt8) -> Bool {
        let count: Int
        var low: UInt8 = 0x80
        var high: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: count = 1
        case 0xE0:
            count = 2
            low = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: count = 2
        case 0xED:
            count = 2
            high = 0x9F
        case 0xF0:
            count = 3
            low = 0x90
        case 0xF1...0xF3: count = 3
        case 0xF4:
            count = 3
            high = 0x8F
        default: return false
        }
        guard end - index >= count else { return false }
        for offset in 0..<count {
            let byte = bytes[index + offset]
            let range = offset == 0 ? low...high : 0x80...0xBF
            guard range.contains(byte) else { return false }
        }
        index += count
        return true
    }
}
