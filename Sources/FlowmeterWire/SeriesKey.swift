public import FlowmeterModels

/// The Kafka key of `flowmeter.events.v1`: app, kind and widget type.
///
/// Written as a compact JSON array, `["com.example.shop","unknownType","hologram_projector"]` (`null` for no widget
/// type): JSON string escaping makes the three parts unambiguous whatever characters they hold, and the key stays
/// readable in `kcat`. Equal inputs always give equal bytes, so partitioning is stable.
public enum SeriesKey {
    /// Appends the key bytes for one series to `buffer`.
    public static func append(appID: String, kind: DiagnosticKind, widgetType: String?, to buffer: inout [UInt8]) {
        buffer.append(UInt8(ascii: "["))
        JSONString.append(appID, to: &buffer)
        buffer.append(UInt8(ascii: ","))
        JSONString.append(kind.rawValue, to: &buffer)
        buffer.append(UInt8(ascii: ","))
        if let widgetType {
            JSONString.append(widgetType, to: &buffer)
        } else {
            buffer.append(contentsOf: [UInt8(ascii: "n"), UInt8(ascii: "u"), UInt8(ascii: "l"), UInt8(ascii: "l")])
        }
        buffer.append(UInt8(ascii: "]"))
    }

    /// The most bytes the key of one series can take; size a buffer for `write(appID:kind:widgetType:into:)` with it.
    public static func maxLength(appID: String, kind: DiagnosticKind, widgetType: String?) -> Int {
        4 + ByteSink.maxQuotedLength(appID) + ByteSink.maxQuotedLength(kind.rawValue)
            + (widgetType.map(ByteSink.maxQuotedLength) ?? 4)
    }

    /// Writes the key over the start of `buffer` and returns its length: the same bytes as `append`, without
    /// per-byte checks. `buffer` grows (zero-filled) when shorter than `maxLength(appID:kind:widgetType:)`; the bytes
    /// after the key are left as they were, so reuse one buffer and send `buffer[..<length]`.
    public static func write(appID: String, kind: DiagnosticKind, widgetType: String?, into buffer: inout [UInt8])
        -> Int
    {
        let bound = maxLength(appID: appID, kind: kind, widgetType: widgetType)
        if buffer.count < bound { buffer.append(contentsOf: repeatElement(0, count: bound - buffer.count)) }
        return buffer.withUnsafeMutableBytes { memory in
            write(appID: appID, kind: kind, widgetType: widgetType, into: memory)
        }
    }

    /// Writes the key into `memory`, which must hold at least `maxLength(appID:kind:widgetType:)` bytes, and returns
    /// its length.
    public static func write(
        appID: String, kind: DiagnosticKind, widgetType: String?, into memory: UnsafeMutableRawBufferPointer
    ) -> Int {
        guard let base = memory.baseAddress else { return 0 }
        var sink = ByteSink(base.assumingMemoryBound(to: UInt8.self))
        sink.byte(UInt8(ascii: "["))
        sink.quoted(appID)
        sink.byte(UInt8(ascii: ","))
        writeRest(kind: kind, widgetType: widgetType, to: &sink)
        precondition(sink.position <= memory.count, "SeriesKey.write: memory below maxLength")
        return sink.position
    }

    /// What every key of one app starts with, `["<appID>",`, escaped once for a batch's keys.
    public struct AppPrefix: Sendable {
        let bytes: [UInt8]

        /// Escapes the app's part of its keys.
        public init(appID: String) {
            var bytes: [UInt8] = []
            bytes.append(UInt8(ascii: "["))
            JSONString.append(appID, to: &bytes)
            bytes.append(UInt8(ascii: ","))
            self.bytes = bytes
        }

        /// The most bytes a key with this prefix can take.
        public func maxLength(kind: DiagnosticKind, widgetType: String?) -> Int {
            bytes.count + 2 + ByteSink.maxQuotedLength(kind.rawValue) + (widgetType.map(ByteSink.maxQuotedLength) ?? 4)
        }

        /// Writes the key of the app's series into `memory`, which must hold at least
        /// ``maxLength(kind:widgetType:)`` bytes, and returns its length: the bytes `write(appID:…)` writes.
        public func write(kind: DiagnosticKind, widgetType: String?, into memory: UnsafeMutableRawBufferPointer) -> Int
        {
            guard let base = memory.baseAddress else { return 0 }
            var sink = ByteSink(base.assumingMemoryBound(to: UInt8.self))
            bytes.withUnsafeBytes { sink.bytes($0) }
            SeriesKey.writeRest(kind: kind, widgetType: widgetType, to: &sink)
            precondition(sink.position <= memory.count, "SeriesKey.AppPrefix.write: memory below maxLength")
            return sink.position
        }
    }

    /// `"<kind>",<widget type or null>]`, the part of a key after the app's.
    private static func writeRest(kind: DiagnosticKind, widgetType: String?, to sink: inout ByteSink) {
        sink.quoted(kind.rawValue)
        sink.byte(UInt8(ascii: ","))
        if let widgetType {
            sink.quoted(widgetType)
        } else {
            sink.literal("null")
        }
        sink.byte(UInt8(ascii: "]"))
    }

    /// The key bytes for one series.
    public static func bytes(appID: String, kind: DiagnosticKind, widgetType: String?) -> [UInt8] {
        var buffer: [UInt8] = []
        append(appID: appID, kind: kind, widgetType: widgetType, to: &buffer)
        return buffer
    }
}
