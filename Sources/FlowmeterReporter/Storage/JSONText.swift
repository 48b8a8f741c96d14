/// JSON string literals for the batch files and upload bodies: what RFC 8259 requires escaped (quote, backslash,
/// U+0000–U+001F) and nothing else, in plain Swift so that it compiles wherever an app does.
///
/// The collector's own writer (`FlowmeterWire`'s `JSONString`) is faster on long strings, but it is server code;
/// the SDK's strings are short and mostly need no escaping, which the first loop finds in one pass.
enum JSONText {
    /// Appends `string` as a quoted JSON string literal to `buffer`.
    static func append(_ string: String, to buffer: inout [UInt8]) {
        var string = string
        string.makeContiguousUTF8()
        string.utf8.withContiguousStorageIfAvailable { bytes in
            buffer.append(UInt8(ascii: "\""))
            if !bytes.contains(where: needsEscaping) {
                buffer.append(contentsOf: bytes)
            } else {
                for byte in bytes { appendEscaped(byte, to: &buffer) }
            }
            buffer.append(UInt8(ascii: "\""))
        }
    }

    private static func needsEscaping(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    private static func appendEscaped(_ byte: UInt8, to buffer: inout [UInt8]) {
        guard needsEscaping(byte) else {
            buffer.append(byte)
            return
        }
        buffer.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): buffer.append(byte)
        case 0x0A: buffer.append(UInt8(ascii: "n"))
        case 0x0D: buffer.append(UInt8(ascii: "r"))
        case 0x09: buffer.append(UInt8(ascii: "t"))
        case 0x08: buffer.append(UInt8(ascii: "b"))
        case 0x0C: buffer.append(UInt8(ascii: "f"))
        default:
            let hex: [UInt8] = Array("0123456789abcdef".utf8)
            buffer += [
                UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)],
            ]
        }
    }
}
