public import FlowmeterModels

/// Writes ``EventRecord`` JSON straight into a caller-owned byte buffer, without `JSONEncoder`.
///
/// The output decodes (with `JSONDecoder`) to exactly the record `Codable` would encode. Strings are escaped per
/// RFC 8259 (quote, backslash and control characters); everything else is copied as UTF-8. Absent optionals are
/// left out. The writer only appends: clear and reuse one buffer per thread to avoid allocating per event.
public enum EventRecordWriter {
    /// Appends `record` as one JSON object.
    public static func append(_ record: EventRecord, to buffer: inout [UInt8]) {
        let bound =
            ByteSink.maxQuotedLength(record.id)
            + bodyMaxLength(
                kind: record.kind, widgetType: record.widgetType, codingPath: record.codingPath,
                message: record.message, pageID: record.pageID, surface: record.surface,
                backendRelease: record.backendRelease, appID: record.appID, appVersion: record.appVersion,
                platform: record.platform, installHash: record.installHash, collector: record.collector)
        appendSized(bound, to: &buffer) { sink in
            sink.byte(UInt8(ascii: "{"))
            sink.key("id", first: true)
            sink.quoted(record.id)
            writeBody(
                kind: record.kind, widgetType: record.widgetType, codingPath: record.codingPath,
                message: record.message, pageID: record.pageID, surface: record.surface,
                backendRelease: record.backendRelease, count: record.count, occurredAt: record.occurredAt,
                appID: record.appID, appVersion: record.appVersion, platform: record.platform,
                buildConfiguration: record.buildConfiguration, installHash: record.installHash,
                receivedAt: record.receivedAt, collector: record.collector, to: &sink)
        }
    }

    /// Appends the record for event `index` of a batch, as ``EventRecord/init(event:index:batchID:client:installHash:receivedAt:collector:)``
    /// would make it, without building the record or its fallback id string.
    public static func append(
        event: DiagnosticEvent, index: Int, batchID: String, client: ClientInfo, installHash: String?,
        receivedAt: Timestamp, collector: String, to buffer: inout [UInt8]
    ) {
        let bound = maxLength(
            event: event, batchID: batchID, client: client, installHash: installHash, collector: collector)
        appendSized(bound, to: &buffer) { sink in
            write(
                event: event, index: index, batchID: batchID, client: client, installHash: installHash,
                receivedAt: receivedAt, collector: collector, to: &sink)
        }
    }

    /// The most bytes the record of `event` can take (every string byte escaped as `\u00XX`).
    public static func maxLength(
        event: DiagnosticEvent, batchID: String, client: ClientInfo, installHash: String?, collector: String
    ) -> Int {
        let id =
            event.id.map(ByteSink.maxQuotedLength) ?? (ByteSink.maxQuotedLength(batchID) + 1 + ByteSink.maxIntLength)
        return id
            + bodyMaxLength(
                kind: event.kind, widgetType: event.widgetType, codingPath: event.codingPath, message: event.message,
                pageID: event.pageID, surface: event.surface, backendRelease: event.backendRelease,
                appID: client.appID, appVersion: client.appVersion, platform: client.platform,
                installHash: installHash, collector: collector)
    }

    /// Writes the record of ``append(event:index:batchID:client:installHash:receivedAt:collector:to:)`` over the
    /// start of `buffer` and returns its length; the bytes after it are left as they were.
    ///
    /// `buffer` grows (zero-filled) only when shorter than ``maxLength(event:batchID:client:installHash:collector:)``.
    /// The collector writes a batch's records through ``EventRecordBatch``, which escapes the batch's shared fields
    /// once.
    public static func write(
        event: DiagnosticEvent, index: Int, batchID: String, client: ClientInfo, installHash: String?,
        receivedAt: Timestamp, collector: String, into buffer: inout [UInt8]
    ) -> Int {
        let bound = maxLength(
            event: event, batchID: batchID, client: client, installHash: installHash, collector: collector)
        if buffer.count < bound { buffer.append(contentsOf: repeatElement(0, count: bound - buffer.count)) }
        return buffer.withUnsafeMutableBufferPointer { memory in
            var sink = ByteSink(memory.baseAddress!)
            write(
                event: event, index: index, batchID: batchID, client: client, installHash: installHash,
                receivedAt: receivedAt, collector: collector, to: &sink)
            precondition(sink.position <= memory.count, "EventRecordWriter.write: buffer below maxLength")
            return sink.position
        }
    }

    // One writer for the per-event entry points and the collector's per-batch one, so they cannot drift apart.
    static func write(
        event: DiagnosticEvent, index: Int, batchID: String, client: ClientInfo, installHash: String?,
        receivedAt: Timestamp, collector: String, to sink: inout ByteSink
    ) {
        EventRecordBatch(
            batchID: batchID, client: client, installHash: installHash, receivedAt: receivedAt, collector: collector
        ).write(event: event, index: index, to: &sink)
    }

    /// Appends up to `bound` bytes that `body` writes, through a sink over the array's own storage.
    static func appendSized(_ bound: Int, to buffer: inout [UInt8], _ body: (inout ByteSink) -> Void) {
        let start = buffer.count
        buffer.append(contentsOf: repeatElement(0, count: bound))
        let end = buffer.withUnsafeMutableBufferPointer { memory in
            var sink = ByteSink(memory.baseAddress!, position: start)
            body(&sink)
            precondition(sink.position <= memory.count, "EventRecordWriter: bound too small")
            return sink.position
        }
        buffer.removeLast(buffer.count - end)
    }

    // Fixed text of an event's own fields (braces, keys with quotes, colons, commas) and of the batch's, each a
    // generous round figure.
    static let fixedEventFieldsLength = 160
    private static let fixedTailLength = 160

    static func bodyMaxLength(
        kind: DiagnosticKind, widgetType: String?, codingPath: String?, message: String?, pageID: String?,
        surface: String?, backendRelease: String?, appID: String, appVersion: String, platform: String,
        installHash: String?, collector: String
    ) -> Int {
        var total = eventFieldsMaxLength(
            kind: kind, widgetType: widgetType, codingPath: codingPath, message: message, pageID: pageID,
            surface: surface, backendRelease: backendRelease)
        total += fixedTailLength + ByteSink.maxQuotedTimestampLength + optionalLength(installHash)
        total += ByteSink.maxQuotedLength(appID) + ByteSink.maxQuotedLength(appVersion)
        total += ByteSink.maxQuotedLength(platform) + ByteSink.maxQuotedLength(collector)
        return total
    }

    /// The most bytes ``writeEventFields(kind:widgetType:codingPath:message:pageID:surface:backendRelease:count:occurredAt:to:)``
    /// can write, with room for the record's braces and `"id":` key.
    static func eventFieldsMaxLength(
        kind: DiagnosticKind, widgetType: String?, codingPath: String?, message: String?, pageID: String?,
        surface: String?, backendRelease: String?
    ) -> Int {
        var total = fixedEventFieldsLength + ByteSink.maxQuotedTimestampLength + ByteSink.maxIntLength
        total += ByteSink.maxQuotedLength(kind.rawValue)
        total += optionalLength(widgetType) + optionalLength(codingPath) + optionalLength(message)
        total += optionalLength(pageID) + optionalLength(surface) + optionalLength(backendRelease)
        return total
    }

    private static func optionalLength(_ value: String?) -> Int {
        value.map(ByteSink.maxQuotedLength) ?? 0
    }

    // One body for every entry point, so they cannot drift apart: the event's own fields, then the batch's.
    static func writeBody(
        kind: DiagnosticKind, widgetType: String?, codingPath: String?, message: String?, pageID: String?,
        surface: String?, backendRelease: String?, count: Int, occurredAt: Timestamp, appID: String,
        appVersion: String, platform: String, buildConfiguration: BuildConfiguration, installHash: String?,
        receivedAt: Timestamp, collector: String, to sink: inout ByteSink
    ) {
        writeEventFields(
            kind: kind, widgetType: widgetType, codingPath: codingPath, message: message, pageID: pageID,
            surface: surface, backendRelease: backendRelease, count: count, occurredAt: occurredAt, to: &sink)
        writeTail(
            appID: appID, appVersion: appVersion, platform: platform, buildConfiguration: buildConfiguration,
            installHash: installHash, receivedAt: receivedAt, collector: collector, to: &sink)
    }

    /// `,"kind":…` through `,"occurredAt":"…"`: what differs from one event of a batch to the next.
    static func writeEventFields(
        kind: DiagnosticKind, widgetType: String?, codingPath: String?, message: String?, pageID: String?,
        surface: String?, backendRelease: String?, count: Int, occurredAt: Timestamp, to sink: inout ByteSink
    ) {
        sink.key("kind")
        sink.quoted(kind.rawValue)
        writeOptional("widgetType", widgetType, to: &sink)
        writeOptional("codingPath", codingPath, to: &sink)
        writeOptional("message", message, to: &sink)
        writeOptional("pageID", pageID, to: &sink)
        writeOptional("surface", surface, to: &sink)
        writeOptional("backendRelease", backendRelease, to: &sink)
        sink.key("count")
        sink.int(count)
        sink.key("occurredAt")
        sink.quotedTimestamp(occurredAt)
    }

    /// `,"appID":…` through the closing brace: the same for every event of a batch (``EventRecordBatch`` writes it
    /// once).
    static func writeTail(
        appID: String, appVersion: String, platform: String, buildConfiguration: BuildConfiguration,
        installHash: String?, receivedAt: Timestamp, collector: String, to sink: inout ByteSink
    ) {
        sink.key("appID")
        sink.quoted(appID)
        sink.key("appVersion")
        sink.quoted(appVersion)
        sink.key("platform")
        sink.quoted(platform)
        sink.key("buildConfiguration")
        sink.quoted(buildConfiguration.rawValue)
        writeOptional("installHash", installHash, to: &sink)
        sink.key("receivedAt")
        sink.quotedTimestamp(receivedAt)
        sink.key("collector")
        sink.quoted(collector)
        sink.byte(UInt8(ascii: "}"))
    }

    @inline(__always)
    static func writeOptional(_ key: StaticString, _ value: String?, to sink: inout ByteSink) {
        guard let value else { return }
        sink.key(key)
        sink.quoted(value)
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
        var digits:
            (
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8
            ) =
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
