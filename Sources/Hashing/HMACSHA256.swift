/// HMAC-SHA-256 (RFC 2104 over FIPS 180-4), computed by OpenSSL's libcrypto.
public enum HMACSHA256 {
    /// The length of an authentication code in bytes: 32.
    public static let byteCount = 32

    /// The 32-byte authentication code of `message` under `key`; any key length is valid (RFC 2104).
    public static func authenticationCode(for message: [UInt8], key: [UInt8]) -> [UInt8] {
        key.withUnsafeBytes { key in
            message.withUnsafeBytes { message in LibCrypto.hmacSHA256(key: key, message: message) }
        }
    }

    /// The authentication code of `message`'s UTF-8 bytes under `key`.
    public static func authenticationCode(for message: String, key: [UInt8]) -> [UInt8] {
        var message = message
        return message.withUTF8 { utf8 in
            key.withUnsafeBytes { key in LibCrypto.hmacSHA256(key: key, message: UnsafeRawBufferPointer(utf8)) }
        }
    }
}
