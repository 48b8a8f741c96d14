/// One value bound to a PostgreSQL statement parameter, always sent in binary format.
enum PostgresValue {
    case null
    case int64(Int64)
    case text(String)
    case bytea([UInt8])

    /// The parameter's type OID: `int8`, `text` or `bytea` (0 lets the server infer it for NULL).
    var typeOID: UInt32 {
        switch self {
        case .null: 0
        case .int64: 20
        case .text: 25
        case .bytea: 17
        }
    }

    /// The binary wire form: big-endian for `int8`, UTF-8 for `text`, raw bytes for `bytea`.
    var bytes: [UInt8]? {
        switch self {
        case .null: nil
        case .int64(let value): withUnsafeBytes(of: value.bigEndian) { Array($0) }
        case .text(let text): Array(text.utf8)
        case .bytea(let bytes): bytes
        }
    }
}
