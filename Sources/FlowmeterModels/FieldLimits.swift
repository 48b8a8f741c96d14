/// The contract's length limits for strings, and the one truncation rule both decode paths share.
///
/// Lengths are counted in Unicode scalars, not `Character`s: counting grapheme clusters would cost the fast path a
/// full Unicode segmentation per string, while scalars are counted straight off UTF-8 bytes. Truncation therefore
/// always cuts on a scalar boundary (valid UTF-8), though it may split a multi-scalar grapheme such as a flag.
public enum FieldLimits {
    /// Maximum scalars of `widgetType`.
    public static let widgetType = 128
    /// Maximum scalars of `codingPath`.
    public static let codingPath = 512
    /// Maximum scalars of `message`.
    public static let message = 1024
    /// Maximum scalars of every other string.
    public static let other = 256
    /// Maximum scalars of a rejected value quoted inside a diagnostic message.
    public static let quotedValue = 64

    /// Returns `string` cut to at most `limit` Unicode scalars.
    public static func truncate(_ string: String, to limit: Int) -> String {
        let scalars = string.unicodeScalars
        // UTF-8 byte count bounds scalar count from above, so most strings skip the walk.
        guard string.utf8.count > limit else { return string }
        guard let cut = scalars.index(scalars.startIndex, offsetBy: limit, limitedBy: scalars.endIndex),
            cut != scalars.endIndex
        else { return string }
        return String(scalars[..<cut])
    }

    /// The byte length of the longest prefix of valid UTF-8 `bytes` with at most `limit` scalars.
    ///
    /// Inline, since it runs per decoded string and nearly every one has fewer bytes than the limit has scalars.
    @inline(__always)
    package static func truncatedLength(_ bytes: UnsafeRawBufferPointer, limit: Int) -> Int {
        guard bytes.count > limit else { return bytes.count }
        return scalarPrefixLength(bytes, limit: limit)
    }

    /// ``truncatedLength(_:limit:)`` for `bytes` longer than `limit`: counts the scalars.
    static func scalarPrefixLength(_ bytes: UnsafeRawBufferPointer, limit: Int) -> Int {
        var scalars = 0
        for index in 0..<bytes.count where bytes[index] & 0xC0 != 0x80 {
            if scalars == limit { return index }
            scalars += 1
        }
        return bytes.count
    }
}
