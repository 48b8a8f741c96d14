/// Whether `a` and `b` hold the same bytes, in time that depends only on their lengths (OpenSSL `CRYPTO_memcmp`).
///
/// Different lengths return `false` at once, so the length is not secret; compare fixed-length values (such as
/// `SHA256.digest` of each side) when the length must not leak either.
public func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    return a.withUnsafeBytes { a in b.withUnsafeBytes { b in LibCrypto.memoryEquals(a, b) } }
}
