public import FlowmeterModels

/// Writes the `flowmeter.batches.v1` record of one accepted batch (docs/api.md#kafka-topics): the batch's own fields
/// once, then its accepted events, split into parts when the batch would not fit one record.
///
/// The split depends only on what the app sent (the batch's fields and events, never the collector's name, clock or
/// skew), so every retry of the batch, through any collector, splits the same way and each part dedupes against
/// the same part of an earlier copy. Per event it copies escaped table entries like ``CompactRecordWriter`` (which
/// it uses), with `occurredAt` shifted by the batch's skew correction.
public struct BatchRecordWriter {
    /// The batch's own fields.
    public struct Batch: Sendable {
        /// The batch id (the app's, or one the collector made when it sent none).
        public var batchID: String
        /// The app, without its `installID` (never written).
        public var client: ClientInfo
        /// The salted install pseudonym.
        public var installHash: String?
        /// Page decodes since the app's previous batch.
        public var decodes: Int?
        /// What the app's SDK dropped before sending.
        public var clientReport: ClientReport?
        /// When the collector received the batch.
        public var receivedAt: Timestamp
        /// The device clock's offset, `receivedAt - sentAt`, in milliseconds (0 without `sentAt`).
        public var skewMillis: Int64
        /// The collector that took the batch.
        public var collector: String
        /// Events of the batch that were dropped (undecodable, too old, too far ahead).
        public var dropped: Int

        /// Creates the fields.
        public init(
            batchID: String, client: ClientInfo, installHash: String?, decodes: Int?, clientReport: ClientReport?,
            receivedAt: Timestamp, skewMillis: Int64, collector: String, dropped: Int
        ) {
            self.batchID = batchID
            self.client = client
            self.installHash = installHash
            self.decodes = decodes
            self.clientReport = clientReport
            self.receivedAt = receivedAt
            self.skewMillis = skewMillis
            self.collector = collector
            self.dropped = dropped
        }
    }

    /// Room kept in every part for what differs between copies of a batch (collector, receipt time, skew, part
    /// numbers), so that the split does not depend on them.
    public static let variableFieldsAllowance = 2_048

    /// The events of each part, as offsets into the table's events; one empty range for a batch without events.
    public let parts: [Range<Int>]
    private let events: CompactRecordWriter
    private let table: EventTable
    private let positions: [Int]
    private let head: [UInt8]
    private let key: [UInt8]

    /// Prepares the record of `batch` with the accepted events of `table` (`positions[i]`: the index in the batch as
    /// sent of `table.events[i]`), split so that no part exceeds `maxRecordBytes` (a single event larger than that
    /// takes a part of its own).
    public init(
        batch: Batch, table: EventTable, positions: [Int], maxRecordBytes: Int, scratch: EscapedTable = EscapedTable()
    ) {
        self.table = table
        self.positions = positions
        let skew = Duration.milliseconds(batch.skewMillis)
        events = CompactRecordWriter(
            table: table, shared: EventRecordBatch(eventsOfBatch: batch.batchID),
            keyPrefix: SeriesKey.AppPrefix(appID: batch.client.appID), scratch: scratch, shift: skew)
        head = Self.head(of: batch)
        key = Array((batch.client.appID + "/" + batch.batchID).utf8)
        // The budget counts only what every copy of the batch shares: its fields as the app sent them and its events.
        let shared = Self.sharedLength(of: batch)
        let budget = max(1, maxRecordBytes - shared - Self.variableFieldsAllowance)
        var parts: [Range<Int>] = []
        var start = 0
        var used = 0
        let compact = table.events
        for offset in compact.indices {
            let length = events.maxLength(of: compact[offset]) + 1
            if offset > start && used + length > budget {
                parts.append(start..<offset)
                start = offset
                used = 0
            }
            used += length
        }
        parts.append(start..<compact.count)
        self.parts = parts
    }

    /// The record key: `<appID>/<batch id>`, the same for every copy and part of the batch (one partition).
    public var keyBytes: [UInt8] { key }

    /// The most bytes part `part`'s value can take.
    public func maxLength(part: Int) -> Int {
        var length = head.count + 64 + 2 * ByteSink.maxIntLength
        for offset in parts[part] { length += events.maxLength(of: table.events[offset]) + 1 }
        return length
    }

    /// Writes part `part`'s value into `memory` (at least ``maxLength(part:)`` bytes) and returns its length.
    public func write(part: Int, into memory: UnsafeMutableRawBufferPointer) -> Int {
        guard let base = memory.baseAddress else { return 0 }
        var sink = ByteSink(base.assumingMemoryBound(to: UInt8.self))
        head.withUnsafeBytes { sink.bytes($0) }
        sink.key("part")
        sink.int(part)
        sink.key("parts")
        sink.int(parts.count)
        sink.key("events")
        sink.byte(UInt8(ascii: "["))
        var position = sink.position
        let compact = table.events
        for offset in parts[part] {
            if offset != parts[part].lowerBound {
                base.storeBytes(of: UInt8(ascii: ","), toByteOffset: position, as: UInt8.self)
                position += 1
            }
            position += events.write(
                event: compact[offset], index: positions[offset],
                into: UnsafeMutableRawBufferPointer(rebasing: memory[position...]))
        }
        sink = ByteSink(base.assumingMemoryBound(to: UInt8.self), position: position)
        sink.byte(UInt8(ascii: "]"))
        sink.byte(UInt8(ascii: "}"))
        precondition(sink.position <= memory.count, "BatchRecordWriter.write: memory below maxLength")
        return sink.position
    }

    /// The batch's fields from `{` through `"dropped"`, without a closing brace.
    private static func head(of batch: Batch) -> [UInt8] {
        let bound = sharedLength(of: batch) + variableFieldsAllowance + ByteSink.maxQuotedLength(batch.collector)
        var bytes = [UInt8](repeating: 0, count: bound)
        let length = bytes.withUnsafeMutableBufferPointer { memory in
            var sink = ByteSink(memory.baseAddress!)
            let client = batch.client
            sink.byte(UInt8(ascii: "{"))
            sink.key("batchID", first: true)
            sink.quoted(batch.batchID)
            sink.key("appID")
            sink.quoted(client.appID)
            sink.key("appVersion")
            sink.quoted(client.appVersion)
            if let build = client.build {
                sink.key("build")
                sink.quoted(build)
            }
            sink.key("platform")
            sink.quoted(client.platform)
            if let osVersion = client.osVersion {
                sink.key("osVersion")
                sink.quoted(osVersion)
            }
            if let sdkVersion = client.sdkVersion {
                sink.key("sdkVersion")
                sink.quoted(sdkVersion)
            }
            sink.key("buildConfiguration")
            sink.quoted(client.buildConfiguration.rawValue)
            if let policy = client.unknownPolicy {
                sink.key("unknownPolicy")
                sink.quoted(policy.rawValue)
            }
            if let capabilities = client.capabilities {
                sink.key("capabilities")
                sink.byte(UInt8(ascii: "{"))
                var first = true
                if let version = capabilities.maxSchemaVersion {
                    sink.key("maxSchemaVersion", first: true)
                    sink.int(version)
                    first = false
                }
                if let types = capabilities.registeredTypes {
                    sink.key("registeredTypes", first: first)
                    sink.byte(UInt8(ascii: "["))
                    for (index, type) in types.enumerated() {
                        if index > 0 { sink.byte(UInt8(ascii: ",")) }
                        sink.quoted(type)
                    }
                    sink.byte(UInt8(ascii: "]"))
                }
                sink.byte(UInt8(ascii: "}"))
            }
            if let installHash = batch.installHash {
                sink.key("installHash")
                sink.quoted(installHash)
            }
            if let decodes = batch.decodes {
                sink.key("decodes")
                sink.int(decodes)
            }
            if let report = batch.clientReport {
                sink.key("clientReport")
                sink.byte(UInt8(ascii: "{"))
                sink.key("discarded", first: true)
                sink.byte(UInt8(ascii: "["))
                for (index, entry) in report.discarded.enumerated() {
                    if index > 0 { sink.byte(UInt8(ascii: ",")) }
                    sink.byte(UInt8(ascii: "{"))
                    sink.key("reason", first: true)
                    sink.quoted(entry.reason)
                    sink.key("events")
                    sink.int(entry.events)
                    sink.byte(UInt8(ascii: "}"))
                }
                sink.byte(UInt8(ascii: "]"))
                sink.byte(UInt8(ascii: "}"))
            }
            sink.key("receivedAt")
            sink.quotedTimestamp(batch.receivedAt)
            sink.key("skewMillis")
            sink.int(Int(batch.skewMillis))
            sink.key("collector")
            sink.quoted(batch.collector)
            sink.key("dropped")
            sink.int(batch.dropped)
            precondition(sink.position <= bound, "BatchRecordWriter: head bound too small")
            return sink.position
        }
        return Array(bytes[..<length])
    }

    /// The most bytes of the head that every copy of the batch shares (all but collector, times and skew).
    private static func sharedLength(of batch: Batch) -> Int {
        let client = batch.client
        var length = 256
        for text in [
            client.appID, client.appVersion, client.platform, client.buildConfiguration.rawValue, batch.batchID,
        ] {
            length += ByteSink.maxQuotedLength(text)
        }
        for text in [
            client.build, client.osVersion, client.sdkVersion, client.unknownPolicy?.rawValue, batch.installHash,
        ] {
            length += text.map(ByteSink.maxQuotedLength) ?? 0
        }
        if let capabilities = client.capabilities {
            length += 64 + (capabilities.registeredTypes ?? []).reduce(0) { $0 + ByteSink.maxQuotedLength($1) + 1 }
        }
        if let report = batch.clientReport {
            length += 32 + report.discarded.reduce(0) { $0 + ByteSink.maxQuotedLength($1.reason) + 48 }
        }
        return length
    }
}
