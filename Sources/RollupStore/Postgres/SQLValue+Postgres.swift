extension SQLValue {
    /// The parameter's type OID: `int8`, `text` or `bytea` (0 lets the server infer it for NULL).
    var postgresTypeOID: UInt32 {
        switch self {
        case .null: 0
        case .integer: 20
        case .text: 25
        case .blob: 17
        }
    }

    /// The binary wire form: big-endian for `int8`, UTF-8 for `text`, raw bytes for `bytea`; nil for NULL.
    var postgresBytes: [UInt8]? {
        switch self {
        case .null: nil
        case .integer(let value): withUnsafeBytes(of: value.bigEndian) { Array($0) }
        case .text(let text): Array(text.utf8)
        case .blob(let bytes): bytes
        }
    }

    /// The value in COPY text format: `\N` for NULL, backslash escapes for text, `\\x…` hex for bytea.
    func appendCopyText(to buffer: inout [UInt8]) {
        switch self {
        case .null:
            buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "N")])
        case .integer(let value):
            buffer.append(contentsOf: String(value).utf8)
        case .text(let text):
            for byte in text.utf8 {
                switch byte {
                case UInt8(ascii: "\\"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
                case UInt8(ascii: "\t"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
                case UInt8(ascii: "\n"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
                case UInt8(ascii: "\r"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
                default: buffer.append(byte)
                }
            }
        case .blob(let bytes):
            // bytea's hex input form is `\x…`; COPY's own escaping doubles the backslash.
            buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\"), UInt8(ascii: "x")])
            let digits = Array("0123456789abcdef".utf8)
            for byte in bytes {
                buffer.append(digits[Int(byte >> 4)])
                buffer.append(digits[Int(byte & 0x0f)])
            }
        }
    }
}
