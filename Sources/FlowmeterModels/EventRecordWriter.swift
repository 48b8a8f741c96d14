/// Writes ``EventRecord`` JSON straight into a caller-owned byte buffer, without `JSONEncoder`.
///
/// The output decodes (with `JSONDecoder`) to exactly the record `Codable` would encode. Strings are escaped per
/// RFC 8259 (quote, backslash and control characters); everything else is copied as UTF-8. Absent optionals are
/// left out. The writer only appends: clear and reuse one buffer per thread to avoid allocating per event.
public enum EventRecordWriter {
    /// Appends `record` as one JSON object.
    public static func append(_ record: EventRecord, to buffer: inout [UInt8]) {
        buffer.append(UInt8(ascii: "{"))
        appendKey("id", first: true, to: &buffer)
        appendString(record.id, to: &buffer)
        appendBody(
            kind: record.kind, widgetType: record.widgetType, codingPath: record.codingPath, message: record.message,
            pageID: record.pageID, surface: record.surface, backendRelease: record.backendRelease, count: record.count,
            occurredAt: record.occurredAt, appID: record.appID, appVersion: record.appVersion,
            platform: record.platform, buildConfiguration: record.buildConfiguration,
            installHash: record.installHash, receivedAt: record.receivedAt, collector: record.collector, to: &buffer)
    }

    /// Appends the record for event `index` of a batch, as ``EventRecord/init(event:index:batchID:client:installHash:receivedAt:collector:)``
    /// would make it, without building the record or its fallback id string.
    public static func append(
        event: DiagnosticEvent, index: Int, batchID: String, client: ClientInfo, installHash: String?,
        receivedAt: Timestamp, collector: String, to buffer: inout [UInt8]
    ) {
        buffer.append(UInt8(ascii: "{"))
        appendKey("id", first: true, to: &buffer)
        if let id = event.id {
            appendString(id, to: &buffer)
        } else {
            buffer.append(UInt8(ascii: "\""))
            appendEscaped(batchID, to: &buffer)
            buffer.append(UInt8(ascii: "/"))
            appendInt(index, to: &buffer)
            buffer.append(UInt8(ascii: "\""))
        }
        appendBody(
            kind: event.kind, widgetType: event.widgetType, codingPath: event.codingPath, message: event.message,
            pageID: event.pageID, surface: event.surface, backendRelease: event.backendRelease, count: event.count,
            occurredAt: event.occurredAt, appID: client.appID, appVersion: client.appVersion,
            platform: client.platform, buildConfiguration: client.buildConfiguration, installHash: installHash,
            receivedAt: receivedAt, collector: collector, to: &buffer)
    }

    // One body for both entry points, so they cannot drift apart.
    static func appendBody(
        kind: DiagnosticKind, widgetType: String?, codingPath: String?, message: String?, pageID: String?,
        surface: String?, backendRelease: String?, count: Int, occurredAt: Timestamp, appID: String,
        appVersion: String, platform: String, buildConfiguration: BuildConfiguration, installHash: String?,
        receivedAt: Timestamp, collector: String, to buffer: inout [UInt8]
    ) {
        appendKey("kind", to: &buffer)
        appendString(kind.rawValue, to: &buffer)
        appendOptional("widgetType", widgetType, to: &buffer)
        appendOptional("codingPath", codingPath, to: &buffer)
        appendOptional("message", message, to: &buffer)
        appendOptional("pageID", pageID, to: &buffer)
        appendOptional("surface", surface, to: &buffer)
        appendOptional("backendRelease", backendRelease, to: &buffer)
        appendKey("count", to: &buffer)
        appendInt(count, to: &buffer)
        appendKey("occurredAt", to: &buffer)
        appendTimestamp(occurredAt, to: &buffer)
        appendKey("appID", to: &buffer)
        appendString(appID, to: &buffer)
        appendKey("appVersion", to: &buffer)
        appendString(appVersion, to: &buffer)
        appendKey("platform", to: &buffer)
        appendString(platform, to: &buffer)
        appendKey("buildConfiguration", to: &buffer)
        appendString(buildConfiguration.rawValue, to: &buffer)
        appendOptional("installHash", installHash, to: &buffer)
        appendKey("receivedAt", to: &buffer)
        appendTimestamp(receivedAt, to: &buffer)
        appendKey("collector", to: &buffer)
        appendString(collector, to: &buffer)
        buffer.append(UInt8(ascii: "}"))
    }

    static func appendKey(_ key: StaticString, first: Bool = false, to buffer: inout [UInt8]) {
        if !first { buffer.append(UInt8(ascii: ",")) }
        buffer.append(UInt8(ascii: "\""))
        buffer.append(contentsOf: UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
        buffer.append(UInt8(ascii: "\""))
        buffer.append(UInt8(ascii: ":"))
    }

    static func appendOptional(_ key: StaticString, _ value: String?, to buffer: inout [UInt8]) {
        guard let value else { return }
        appendKey(key, to: &buffer)
        appendString(value, to: &buffer)
    }

    static func appendTimestamp(_ time: Timestamp, to buffer: inout [UInt8]) {
        buffer.append(UInt8(ascii: "\""))
        time.appendRFC3339(to: &buffer)
        buffer.append(UInt8(ascii: "\""))
    }

    /// Appends `string` as a quoted, escaped JSON string.
    public static func appendString(_ string: String, to buffer: inout [UInt8]) {
        buffer.append(UInt8(ascii: "\""))
        appendEscaped(string, to: &buffer)
        buffer.append(UInt8(ascii: "\""))
    }

    static func appendEscaped(_ string: String, to buffer: inout [UInt8]) {
        var string = string
        string.withUTF8 { bytes in
            var runStart = 0
            for position in 0..<bytes.count {
                let byte = bytes[position]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<position]))
                runStart = position + 1
                buffer.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): buffer.append(byte)
                case 0x0A: buffer.append(UInt8(ascii: "n"))
                case 0x0D: buffer.append(UInt8(ascii: "r"))
                case 0x09: buffer.append(UInt8(ascii: "t"))
                default:
                    let hex: [UInt8] = Array("0123456789abcdef".utf8)
                    buffer.append(contentsOf: [UInt8(ascii: "u"), 48, 48, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
                }
            }
            buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...]))
        }
    }

    static func appendInt(_ value: Int, to buffer: inout [UInt8]) {
        if value < 0 {
            buffer.append(UInt8(ascii: "-"))
            // Int.min has no positive counterpart, so print through its magnitude.
            appendUnsigned(value.magnitude, to: &buffer)
        } else {
            appendUnsigned(UInt(value), to: &buffer)
        }
    }

    static func appendUnsigned(_ value: UInt, to buffer: inout [UInt8]) {
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var rest = value
        var count = 0
        withUnsafeMutableBytes(of: &digits) { storage in
            repeat {
                storage[19 - count] = UInt8(48 + rest % 10)
                rest /= 10
                count += 1
            } while rest > 0
            buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: storage[(20 - count)...]))
        }
    }
}
