/// The Kafka key of `flowmeter.events.v1`: app, kind and widget type.
///
/// Written as a compact JSON array, `["com.example.shop","unknownType","hologram_projector"]` (`null` for no widget
/// type): JSON string escaping makes the three parts unambiguous whatever characters they hold, and the key stays
/// readable in `kcat`. Equal inputs always give equal bytes, so partitioning is stable.
public enum SeriesKey {
    /// Appends the key bytes for one series to `buffer`.
    public static func append(appID: String, kind: DiagnosticKind, widgetType: String?, to buffer: inout [UInt8]) {
        buffer.append(UInt8(ascii: "["))
        EventRecordWriter.appendString(appID, to: &buffer)
        buffer.append(UInt8(ascii: ","))
        EventRecordWriter.appendString(kind.rawValue, to: &buffer)
        buffer.append(UInt8(ascii: ","))
        if let widgetType {
            EventRecordWriter.appendString(widgetType, to: &buffer)
        } else {
            buffer.append(contentsOf: [UInt8(ascii: "n"), UInt8(ascii: "u"), UInt8(ascii: "l"), UInt8(ascii: "l")])
        }
        buffer.append(UInt8(ascii: "]"))
    }

    /// The key bytes for one series.
    public static func bytes(appID: String, kind: DiagnosticKind, widgetType: String?) -> [UInt8] {
        var buffer: [UInt8] = []
        append(appID: appID, kind: kind, widgetType: widgetType, to: &buffer)
        return buffer
    }
}
