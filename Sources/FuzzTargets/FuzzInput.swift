import FlowmeterModels

/// Draws values from fuzz input bytes, so mutations of the bytes become mutations of the values.
///
/// Past the end every draw returns zero (an empty string, `false`), so any input makes a value.
struct FuzzInput {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Whether every byte has been drawn.
    var isAtEnd: Bool { offset >= bytes.count }

    mutating func byte() -> UInt8 {
        guard offset < bytes.count else { return 0 }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func bool() -> Bool { byte() & 1 == 1 }

    mutating func uint64() -> UInt64 {
        var value: UInt64 = 0
        for _ in 0..<8 { value = value << 8 | UInt64(byte()) }
        return value
    }

    mutating func int64() -> Int64 { Int64(bitPattern: uint64()) }

    /// A value in `range`, from one to eight bytes.
    mutating func int(in range: ClosedRange<Int64>) -> Int64 {
        let width = UInt64(bitPattern: range.upperBound &- range.lowerBound)
        guard width != UInt64.max else { return int64() }
        var value: UInt64 = 0
        var remaining = width
        repeat {
            value = value << 8 | UInt64(byte())
            remaining >>= 8
        } while remaining > 0
        return range.lowerBound &+ Int64(bitPattern: value % (width + 1))
    }

    /// A string of up to 31 scalars, heavy on what breaks text handling: NUL and other control characters, quotes
    /// and backslashes, combining marks, U+2028, byte-order marks, noncharacters, astral scalars.
    mutating func string() -> String {
        let length = Int(byte() % 32)
        var scalars = String.UnicodeScalarView()
        for _ in 0..<length {
            let lead = byte()
            if lead < 0x80 {
                scalars.append(Unicode.Scalar(lead))
            } else if lead < 0xC0 {
                scalars.append(Self.interesting[Int(lead - 0x80) % Self.interesting.count])
            } else {
                let value = UInt32(byte()) << 8 | UInt32(byte()) | UInt32(lead & 0x0F) << 16
                scalars.append(Unicode.Scalar(min(value, 0x10FFFF)) ?? "\u{FFFD}")
            }
        }
        return String(scalars)
    }

    /// A string or nil.
    mutating func optionalString() -> String? { bool() ? string() : nil }

    /// A string that ``IdentifierRule`` accepts, as every identifier the collector builds is: a drawn string without
    /// its control characters, with an `x` appended when nothing visible is left.
    mutating func identifier() -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in string().unicodeScalars where !(scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)) {
            scalars.append(scalar)
        }
        let text = String(scalars)
        return IdentifierRule.isValid(text) ? text : text + "x"
    }

    /// An identifier or nil.
    mutating func optionalIdentifier() -> String? { bool() ? identifier() : nil }

    private static let interesting: [Unicode.Scalar] = [
        "\u{0}", "\u{7F}", "\u{80}", "\u{9F}", "\u{A0}", "\u{AD}", "é", "\u{301}", "\u{200B}", "\u{200D}", "\u{2028}",
        "\u{2029}", "\u{202E}", "\u{FEFF}", "\u{FFFD}", "\u{FFFE}", "\u{FFFF}", "\u{1F600}", "\u{10FFFF}", "\"", "\\",
        "/", "=", "+", "-", "@", "|", ",", "<", ">", "&", "'",
    ]
}
