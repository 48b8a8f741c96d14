import CCrypto

/// HMAC-SHA-256 under one key, with the key's two padded blocks hashed once, at creation.
///
/// HMAC(K, m) = SHA-256((K' ⊕ opad) ‖ SHA-256((K' ⊕ ipad) ‖ m)), where K' is the key padded to SHA-256's 64-byte
/// block (or, past 64 bytes, its digest padded). The two prefixes never change for one key, so their hash states are
/// kept and copied per message: a code then costs two short digests, where OpenSSL's one-shot `HMAC()` looks the
/// algorithm up, processes the key and allocates its contexts on every call (about 23,000 instructions for a
/// 36-byte install ID, a tenth of that here).
///
/// Thread-safe: the two kept states are only read (copied) after `init`.
public final class KeyedHMACSHA256: @unchecked Sendable {
    // @unchecked: `inner` and `outer` are written only in init; EVP_MD_CTX_copy_ex reads them.
    private let inner: OpaquePointer
    private let outer: OpaquePointer

    private static let blockSize = 64

    /// Prepares codes under `key` (any length, also empty).
    public init(key: [UInt8]) {
        var block = key
        if block.count > Self.blockSize {
            block = key.withUnsafeBytes { LibCrypto.sha256($0) }
        }
        block += [UInt8](repeating: 0, count: Self.blockSize - block.count)
        inner = Self.absorbed(block.map { $0 ^ 0x36 })
        outer = Self.absorbed(block.map { $0 ^ 0x5C })
    }

    deinit {
        EVP_MD_CTX_free(inner)
        EVP_MD_CTX_free(outer)
    }

    /// A SHA-256 state that has hashed `prefix`.
    private static func absorbed(_ prefix: [UInt8]) -> OpaquePointer {
        let context = EVP_MD_CTX_new()!
        let ok = prefix.withUnsafeBytes { bytes in
            EVP_DigestInit_ex(context, EVP_sha256(), nil) == 1
                && EVP_DigestUpdate(context, bytes.baseAddress, bytes.count) == 1
        }
        precondition(ok, "SHA-256 failed in libcrypto")
        return context
    }

    /// The 32-byte code of `message`.
    public func authenticationCode(for message: UnsafeRawBufferPointer) -> [UInt8] {
        let context = EVP_MD_CTX_new()!
        defer { EVP_MD_CTX_free(context) }
        return [UInt8](unsafeUninitializedCapacity: LibCrypto.sha256Length) { output, initializedCount in
            var length: UInt32 = 0
            var ok = EVP_MD_CTX_copy_ex(context, inner) == 1
            // A zero-length message may come with a nil base address; OpenSSL wants a valid pointer.
            withUnsafeBytes(of: 0 as UInt8) { empty in
                ok = ok && EVP_DigestUpdate(context, message.baseAddress ?? empty.baseAddress, message.count) == 1
            }
            ok = ok && EVP_DigestFinal_ex(context, output.baseAddress, &length) == 1
            ok = ok && EVP_MD_CTX_copy_ex(context, outer) == 1
            ok = ok && EVP_DigestUpdate(context, output.baseAddress, Int(length)) == 1
            ok = ok && EVP_DigestFinal_ex(context, output.baseAddress, &length) == 1
            precondition(ok && length == UInt32(LibCrypto.sha256Length), "HMAC-SHA-256 failed in libcrypto")
            initializedCount = Int(length)
        }
    }

    /// The 32-byte code of `message`'s UTF-8 bytes.
    public func authenticationCode(for message: String) -> [UInt8] {
        var message = message
        return message.withUTF8 { authenticationCode(for: UnsafeRawBufferPointer($0)) }
    }
}
