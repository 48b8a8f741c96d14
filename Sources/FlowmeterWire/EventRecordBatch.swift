public import FlowmeterModels

/// What every record of one batch shares, escaped once: the `<batch id>/` of ids made from the batch's, and the
/// record's tail (`"appID"` through `"collector"`, the same for every event of the batch).
///
/// ``write(event:index:into:)`` then writes only the event's own fields and copies the rest: per event, seven strings
/// and a timestamp fewer to escape and format than writing each record whole. ``EventRecordWriter``'s per-event entry
/// points write through it too; the tests hold its records to the `Codable` encoding of ``EventRecord``.
public struct EventRecordBatch: Sendable {
    /// `<batch id escaped>/`, for events without an id of their own.
    let idPrefix: [UInt8]
    /// `,"appID":…,"collector":"…"}`.
    let tail: [UInt8]

    /// Prepares the events of one batch record (``BatchRecordWriter``): ids made from `batchID`, and no tail (the
    /// batch's own fields are written once, before its events).
    public init(eventsOfBatch batchID: String) {
        var prefix = [UInt8](repeating: 0, count: ByteSink.maxQuotedLength(batchID) + 1)
        let prefixLength = prefix.withUnsafeMutableBufferPointer { memory in
            var sink = ByteSink(memory.baseAddress!)
            sink.escaped(batchID)
            sink.byte(UInt8(ascii: "/"))
            return sink.position
        }
        idPrefix = Array(prefix[..<prefixLength])
        tail = [UInt8(ascii: "}")]
    }

    /// Prepares the shared parts of a batch's records.
    public init(batchID: String, client: ClientInfo, installHash: String?, receivedAt: Timestamp, collector: String) {
        var prefix = [UInt8](repeating: 0, count: ByteSink.maxQuotedLength(batchID) + 1)
        let prefixLength = prefix.withUnsafeMutableBufferPointer { memory in
            var sink = ByteSink(memory.baseAddress!)
            sink.escaped(batchID)
            sink.byte(UInt8(ascii: "/"))
            return sink.position
        }
        idPrefix = Array(prefix[..<prefixLength])
        let bound =
            192 + ByteSink.maxQuotedLength(client.appID) + ByteSink.maxQuotedLength(client.appVersion)
            + ByteSink.maxQuotedLength(client.platform) + ByteSink.maxQuotedLength(client.buildConfiguration.rawValue)
            + (installHash.map(ByteSink.maxQuotedLength) ?? 0) + ByteSink.maxQuotedTimestampLength
            + ByteSink.maxQuotedLength(collector)
        var tail = [UInt8](repeating: 0, count: bound)
        let tailLength = tail.withUnsafeMutableBufferPointer { memory in
            var sink = ByteSink(memory.baseAddress!)
            EventRecordWriter.writeTail(
                appID: client.appID, appVersion: client.appVersion, platform: client.platform,
                buildConfiguration: client.buildConfiguration, installHash: installHash, receivedAt: receivedAt,
                collector: collector, to: &sink)
            precondition(sink.position <= bound, "EventRecordBatch: tail bound too small")
            return sink.position
        }
        self.tail = Array(tail[..<tailLength])
    }

    /// The most bytes the record of `event` can take.
    public func maxLength(of event: DiagnosticEvent) -> Int {
        let id = event.id.map(ByteSink.maxQuotedLength) ?? (idPrefix.count + 2 + ByteSink.maxIntLength)
        return id + tail.count
            + EventRecordWriter.eventFieldsMaxLength(
                kind: event.kind, widgetType: event.widgetType, codingPath: event.codingPath, message: event.message,
                pageID: event.pageID, surface: event.surface, backendRelease: event.backendRelease)
    }

    /// Writes the record of event `index` into `memory`, which must hold at least ``maxLength(of:)`` bytes, and
    /// returns its length.
    public func write(event: DiagnosticEvent, index: Int, into memory: UnsafeMutableRawBufferPointer) -> Int {
        guard let base = memory.baseAddress else { return 0 }
        var sink = ByteSink(base.assumingMemoryBound(to: UInt8.self))
        write(event: event, index: index, to: &sink)
        precondition(sink.position <= memory.count, "EventRecordBatch.write: memory below maxLength")
        return sink.position
    }

    func write(event: DiagnosticEvent, index: Int, to sink: inout ByteSink) {
        sink.byte(UInt8(ascii: "{"))
        sink.key("id", first: true)
        if let id = event.id {
            sink.quoted(id)
        } else {
            sink.byte(UInt8(ascii: "\""))
            idPrefix.withUnsafeBytes { sink.bytes($0) }
            sink.int(index)
            sink.byte(UInt8(ascii: "\""))
        }
        EventRecordWriter.writeEventFields(
            kind: event.kind, widgetType: event.widgetType, codingPath: event.codingPath, message: event.message,
            pageID: event.pageID, surface: event.surface, backendRelease: event.backendRelease, count: event.count,
            occurredAt: event.occurredAt, to: &sink)
        tail.withUnsafeBytes { sink.bytes($0) }
    }
}
