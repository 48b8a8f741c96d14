/// Turns raw install IDs into salted pseudonyms, so that a raw install ID never leaves the collector.
///
/// The pseudonym is HMAC-SHA-256(salt, UTF-8 install ID), truncated to its first 16 bytes and published as
/// 32 lowercase hex characters (128 bits: collisions need about 2^64 installs; RFC 2104 §5 allows truncating to
/// half the hash). The same ID under the same salt always gives the same pseudonym, so distinct-install counts work
/// across collectors that share the salt; a different salt changes every pseudonym (rotation). Without the salt,
/// a pseudonym cannot be tied back to a candidate ID by hashing guesses.
///
/// A value type holding the salt's prepared HMAC (``KeyedHMACSHA256``): share it freely across threads.
public struct InstallIDHasher: Sendable {
    /// How many hex characters `pseudonym(for:)` returns: 32.
    public static let pseudonymLength = 32

    private let mac: KeyedHMACSHA256

    /// A hasher keyed by `salt`; use at least 16 random bytes (see `randomBytes(count:)`), and keep them secret.
    ///
    /// Traps on an empty salt: hashing without one would publish a plain, guessable hash of the install ID.
    public init(salt: [UInt8]) {
        precondition(!salt.isEmpty, "an install-ID salt must not be empty")
        self.mac = KeyedHMACSHA256(key: salt)
    }

    /// A hasher keyed by a salt written as hex (as in a configuration file or environment variable).
    ///
    /// Throws `.invalidSalt` for empty text, an odd number of digits, or a character that is not a hex digit.
    public init(hexSalt: String) throws(HashingError) {
        guard let salt = Hex.decode(hexSalt), !salt.isEmpty else {
            throw HashingError(.invalidSalt, "the install-ID salt must be a non-empty, even-length hex string")
        }
        self.mac = KeyedHMACSHA256(key: salt)
    }

    /// The 32-hex-character pseudonym of `installID`, the same for the same ID and salt.
    public func pseudonym(for installID: String) -> String {
        let code = mac.authenticationCode(for: installID)
        return Hex.encode(code.prefix(Self.pseudonymLength / 2))
    }
}
