/// SHA-256 (FIPS 180-4), computed by OpenSSL's libcrypto.
public enum SHA256 {
    /// The 32-byte digest of `bytes`.
    public static func digest(_ bytes: [UInt8]) -> [UInt8] {
        bytes.withUnsafeBytes { LibCrypto.sha256($0) }
    }

    /// The 32-byte digest of `text`'s UTF-8 bytes.
    public static func digest(_ text: String) -> [UInt8] {
        var text = text
        return text.withUTF8 { LibCrypto.sha256(UnsafeRawBufferPointer($0)) }
    }
}
