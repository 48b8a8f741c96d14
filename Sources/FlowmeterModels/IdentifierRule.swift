/// The contract's one rule for what an identifier may be, applied by both decode paths at the edge.
///
/// Identifiers are the strings Flowmeter groups, keys and stores by: `appID`, `appVersion`, `build`, `platform`,
/// `osVersion`, `sdkVersion`, `installID`, `buildConfiguration`, `unknownPolicy`, the batch and event `id`, `kind`,
/// `widgetType`, `pageID`, `surface`, `backendRelease`, and each of `capabilities.registeredTypes`. An identifier holds
/// no control character (U+0000–U+001F, U+007F–U+009F) and is not empty after trimming white space. Lone surrogates
/// never get this far: a `\uD800` escape without its pair makes the whole body invalid JSON text in both paths.
///
/// Every byte an app sends is written by whoever holds its ingest key, and identifiers reach every later reader
/// (Kafka keys, store rows, terminal tables, reports), so they are held to this rule once, here; free text
/// (`message`, `codingPath`) is kept as sent and escaped wherever it is written instead.
public enum IdentifierRule {
    /// Why a value is not an identifier.
    public enum Violation: Hashable, Sendable {
        /// Empty, or only white space.
        case blank
        /// Holds a C0 or C1 control character or DEL.
        case controlCharacter

        /// The diagnostic message for the field `key`, in the contract's wording.
        public func message(key: String) -> String {
            switch self {
            case .blank: DecodeMessages.emptyKind(key)
            case .controlCharacter: "Control character in '\(key)'"
            }
        }
    }

    /// The first way `value` breaks the rule, or nil when it is a valid identifier.
    @inlinable
    public static func violation(in value: String) -> Violation? {
        var copy = value
        return copy.withUTF8 { violation(inUTF8: UnsafeRawBufferPointer($0)) }
    }

    /// The first way the UTF-8 bytes `bytes` (valid UTF-8) break the rule, or nil.
    @usableFromInline
    package static func violation(inUTF8 bytes: UnsafeRawBufferPointer) -> Violation? {
        var hasVisibleASCII = false
        var index = 0
        let count = bytes.count
        // Eight bytes at a time while all are printable ASCII (0x20–0x7E): the common case, and nothing to report.
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        @inline(__always) func isPrintableASCII(_ word: UInt64) -> Bool {
            let deletes = word ^ (ones &* 0x7F)
            let control = (word &- ones &* 0x20) & ~word & highs
            let delete = (deletes &- ones) & ~deletes & highs
            return (control | delete | (word & highs)) == 0
        }
        while index + 8 <= count {
            let word = bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            guard isPrintableASCII(word) else { break }
            if word != ones &* 0x20 { hasVisibleASCII = true }
            index += 8
        }
        // Fewer than eight bytes left after clean words: the last eight bytes as one word (overlapping bytes already
        // found clean), instead of one by one.
        if index < count && index + 8 > count && count >= 8 {
            let word = bytes.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
            if isPrintableASCII(word) {
                if word != ones &* 0x20 { hasVisibleASCII = true }
                index = count
            }
        }
        while index < count {
            let byte = bytes[index]
            if byte < 0x20 || byte == 0x7F { return .controlCharacter }
            // U+0080–U+009F are C2 80 … C2 9F in UTF-8.
            if byte == 0xC2 && index + 1 < count && bytes[index + 1] <= 0x9F { return .controlCharacter }
            if byte > 0x20 && byte < 0x7F { hasVisibleASCII = true }
            index += 1
        }
        if hasVisibleASCII { return nil }
        // No visible ASCII: blank when every scalar is white space (U+0020, U+00A0, U+2000…, U+3000, …).
        let isBlank = String(decoding: bytes, as: UTF8.self).unicodeScalars.allSatisfy { $0.properties.isWhitespace }
        return isBlank ? .blank : nil
    }

    /// Whether `value` is a valid identifier.
    @inlinable
    public static func isValid(_ value: String) -> Bool { violation(in: value) == nil }
}
