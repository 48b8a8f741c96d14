/// One message of `flowmeter.rollups.v1`: a partial rollup (`"type": "series"` or `"version"`) or a collector's
/// watermark (`"type": "watermark"`).
///
/// Collectors before watermarks sent only partial rollups; a sink reads both kinds of topic.
public enum RollupsTopicMessage: Sendable, Equatable {
    /// A partial rollup.
    case partial(PartialRollup)
    /// A collector's heartbeat on the partition it was read from.
    case watermark(CollectorWatermark)

    /// Decodes a message value by its `type`; throws ``RollupsError`` (`invalidPartialRollup`) for anything else.
    public init(jsonBytes bytes: some Collection<UInt8>) throws(RollupsError) {
        let array = Array(bytes)
        // Partial rollups are nearly every message: they are tried first, and only a value that is not one and
        // names the watermark type is parsed again as a watermark (whose error is then the one that explains it).
        do {
            self = .partial(try PartialRollup(jsonBytes: array))
        } catch {
            guard Self.contains(array, Array(#""watermark""#.utf8)) else { throw error }
            self = .watermark(try CollectorWatermark(jsonBytes: array))
        }
    }

    private static func contains(_ bytes: [UInt8], _ needle: [UInt8]) -> Bool {
        guard bytes.count >= needle.count else { return false }
        for start in 0...(bytes.count - needle.count) where bytes[start] == needle[0] {
            if bytes[start..<start + needle.count].elementsEqual(needle) { return true }
        }
        return false
    }
}
