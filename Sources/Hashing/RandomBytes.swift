/// `count` bytes from OpenSSL's cryptographically secure generator (`RAND_bytes`), for salts and keys.
///
/// Throws `.randomUnavailable` when the generator fails, which on Linux means it could not be seeded.
public func randomBytes(count: Int) throws(HashingError) -> [UInt8] {
    precondition(count >= 0, "count must not be negative")
    guard let bytes = LibCrypto.randomBytes(count: count) else {
        throw HashingError(.randomUnavailable, "RAND_bytes could not produce \(count) bytes")
    }
    return bytes
}
