public import FlowmeterModels
public import FlowmeterWire

/// A record of `flowmeter.batches.v1` as the sink's step uses it: ``BatchRecord``'s fields, its events an
/// ``EventTable`` (what ``RollupAggregator`` records) instead of `DiagnosticEvent`s.
@dynamicMemberLookup
public struct CompactBatchRecord: Sendable {
    /// The batch's own fields (``BatchRecordWriter/Batch``), written once for every part.
    public var fields: BatchRecordWriter.Batch
    /// This record's part of the batch, from 0.
    public var part: Int
    /// How many parts the batch was split into.
    public var parts: Int
    /// The accepted events, `occurredAt` corrected for skew.
    public var table: EventTable

    /// The events as `DiagnosticEvent`s (what ``BatchRecord/events`` holds for the same record).
    public var events: [DiagnosticEvent] { table.diagnosticEvents }

    /// The dedupe key (``BatchRecord/key``).
    public var key: String { BatchRecord.key(appID: fields.client.appID, batchID: fields.batchID, part: part) }

    /// The batch's fields read as the record's own (`record.batchID`, `record.client.appID`).
    public subscript<Value>(dynamicMember keyPath: WritableKeyPath<BatchRecordWriter.Batch, Value>) -> Value {
        get { fields[keyPath: keyPath] }
        set { fields[keyPath: keyPath] = newValue }
    }
}

/// The sink's decoder of batch records: one pass over the bytes with the ingest path's scanner
/// (``FastBatchParser``, ``ByteReader``), no Foundation JSON, and the same verdict and values as the `Codable`
/// reference, ``BatchRecord/init(jsonBytes:)``.
///
/// Every record the reference accepts, this accepts with equal fields and events (string for string by UTF-8
/// bytes); every record it rejects, this rejects, with ``SinkError`` `badRecord` (the wording may differ). The
/// differential tests (`BatchRecordDecoderTests`) and the `batch-record` fuzz target hold it to that. Safe on
/// hostile input, as the topic is writable by anyone with Kafka access: no recursion, nesting capped at 512, linear
/// time; the first problem ends the decode.
///
/// Keeps a ``StringInterner`` across records, so the values every record repeats (app ids, versions, kinds, widget
/// types, coding paths, messages) are made once. Not thread-safe: one per thread.
public struct BatchRecordDecoder: Sendable {
    private var interner: StringInterner

    /// A decoder whose interner has `internerSlots` entries.
    public init(internerSlots: Int = 4_096) {
        interner = StringInterner(slots: internerSlots)
    }

    /// The record's keys, in the order the collector writes them (``BatchRecordWriter``).
    static let keys: [StaticString] = [
        "batchID", "appID", "appVersion", "build", "platform", "osVersion", "sdkVersion", "installID",
        "buildConfiguration", "unknownPolicy", "capabilities", "installHash", "decodes", "clientReport", "receivedAt",
        "skewMillis", "collector", "dropped", "part", "parts", "events",
    ]
    static let capabilityKeys: [StaticString] = ["maxSchemaVersion", "registeredTypes"]
    static let reportKeys: [StaticString] = ["discarded"]
    static let discardedKeys: [StaticString] = ["reason", "events"]

    private enum Field {
        static let batchID = 0
        static let appID = 1
        static let appVersion = 2
        static let build = 3
        static let platform = 4
        static let osVersion = 5
        static let sdkVersion = 6
        static let installID = 7
        static let buildConfiguration = 8
        static let unknownPolicy = 9
        static let capabilities = 10
        static let installHash = 11
        static let decodes = 12
        static let clientReport = 13
        static let receivedAt = 14
        static let skewMillis = 15
        static let collector = 16
        static let dropped = 17
        static let part = 18
        static let parts = 19
        static let events = 20
    }

    /// Decodes the JSON value of a record; throws ``SinkError`` (`badRecord`) when it is not one.
    public mutating func decode(_ bytes: [UInt8]) throws(SinkError) -> CompactBatchRecord {
        let result = bytes.withUnsafeBufferPointer { buffer in decode(buffer) }
        return try result.get()
    }

    private mutating func decode(_ buffer: UnsafeBufferPointer<UInt8>) -> Result<CompactBatchRecord, SinkError> {
        guard let base = buffer.baseAddress, buffer.count > 0 else {
            return .failure(SinkError(.badRecord, "not a batch record: empty"))
        }
        // The parser owns the interner while it runs (so its table is mutated in place) and hands it back.
        var parser = FastBatchParser(reader: ByteReader(base: base, count: buffer.count), interner: interner)
        interner = StringInterner.lent
        defer { interner = parser.interner }
        do throws(Failure) {
            return .success(try Self.parse(&parser))
        } catch {
            switch error {
            case .syntax(let syntax):
                return .failure(
                    SinkError(.badRecord, "not a batch record: \(syntax.reason) at offset \(syntax.offset)"))
            case .problem(let problem):
                return .failure(SinkError(.badRecord, "not a batch record: \(problem.message)"))
            case .invalid(let message):
                return .failure(SinkError(.badRecord, "not a batch record: \(message)"))
            }
        }
    }

    /// Why a decode stopped.
    private enum Failure: Error {
        case syntax(JSONSyntaxError)
        case problem(FastBatchParser.Problem)
        case invalid(String)
    }

    private static func problem(_ message: String) -> Failure {
        .invalid(message)
    }

    private typealias Slot = FastBatchParser.Slot

    /// Runs `body`, turning the scanner's syntax errors and the parser's problems into ``Failure``.
    @inline(__always)
    private static func syntax<R>(_ body: () throws(JSONSyntaxError) -> R) throws(Failure) -> R {
        do { return try body() } catch { throw .syntax(error) }
    }

    @inline(__always)
    private static func checked<R>(_ body: () throws(FastBatchParser.Problem) -> R) throws(Failure) -> R {
        do { return try body() } catch { throw .problem(error) }
    }

    private static func parse(_ parser: inout FastBatchParser) throws(Failure) -> CompactBatchRecord {
        let reader = parser.reader
        if reader.count >= 3 && reader.base[0] == 0xEF && reader.base[1] == 0xBB && reader.base[2] == 0xBF {
            parser.reader.index = 3
        }
        parser.reader.skipWhitespace()
        guard parser.reader.peek == UInt8(ascii: "{") else { throw problem("not an object") }
        parser.reader.index += 1
        var slots = [Slot?](repeating: nil, count: keys.count)
        var seen: UInt32 = 0
        var capabilities: Capabilities?
        var clientReport: ClientReport?
        var events: [CompactEvent] = []
        var strings: [String] = []
        var idBytes: [UInt8] = []
        parser.interner.beginBatch()
        var isFirst = true
        while let key = try syntax({ () throws(JSONSyntaxError) in try parser.nextMember(isFirst: &isFirst) }) {
            let field = parser.match(key, keys)
            // The first of a repeated key counts, as for Foundation; the rest are scanned all the same.
            guard field >= 0, seen & (1 << field) == 0 else {
                _ = try syntax { () throws(JSONSyntaxError) in try parser.reader.scanValue(depth: 1) }
                continue
            }
            seen |= 1 << field
            let peek = parser.reader.peek
            switch field {
            case Field.capabilities where peek == UInt8(ascii: "{"):
                capabilities = try parseCapabilities(&parser)
            case Field.clientReport where peek == UInt8(ascii: "{"):
                clientReport = try parseClientReport(&parser)
            case Field.events where peek == UInt8(ascii: "["):
                try parseEvents(&parser, into: &events, strings: &strings, idBytes: &idBytes)
            default:
                slots[field] = try syntax { () throws(JSONSyntaxError) in try parser.reader.scanValue(depth: 1) }
            }
        }
        try syntax { () throws(JSONSyntaxError) in try parser.finish() }

        // `capabilities`, `clientReport` and `events` found as containers are parsed above; what is left in their
        // slots is another type.
        if let slot = slots[Field.capabilities], slot.type != .null { throw problem("capabilities is not an object") }
        if let slot = slots[Field.clientReport], slot.type != .null { throw problem("clientReport is not an object") }
        guard seen & (1 << Field.events) != 0, slots[Field.events] == nil else {
            throw problem("events is missing or not an array")
        }
        let batchID = try requiredString(slots[Field.batchID], parser: &parser)
        let client = try checked { () throws(FastBatchParser.Problem) in
            ClientInfo(
                appID: try parser.requiredIdentifier(slots[Field.appID], key: "appID"),
                appVersion: try parser.requiredIdentifier(slots[Field.appVersion], key: "appVersion"),
                build: try parser.optionalIdentifier(slots[Field.build], key: "build", interned: true),
                platform: try parser.requiredIdentifier(slots[Field.platform], key: "platform"),
                osVersion: try parser.optionalIdentifier(slots[Field.osVersion], key: "osVersion", interned: true),
                sdkVersion: try parser.optionalIdentifier(slots[Field.sdkVersion], key: "sdkVersion", interned: true),
                installID: try parser.optionalIdentifier(slots[Field.installID], key: "installID"),
                buildConfiguration: try parser.optionalIdentifier(
                    slots[Field.buildConfiguration], key: "buildConfiguration", interned: true
                ).map(BuildConfiguration.init(wireValue:)) ?? .release,
                unknownPolicy: try parser.optionalIdentifier(
                    slots[Field.unknownPolicy], key: "unknownPolicy", interned: true
                ).flatMap(UnknownPolicy.init(rawValue:)),
                capabilities: capabilities)
        }
        let installHash = try optionalString(slots[Field.installHash], parser: &parser)
        let decodes = try checked { () throws(FastBatchParser.Problem) in
            try parser.optionalInt(slots[Field.decodes], key: "decodes")
        }
        guard let receivedAtSlot = slots[Field.receivedAt] else { throw problem("receivedAt is missing") }
        let receivedAt = try checked { () throws(FastBatchParser.Problem) in
            try parser.timestamp(receivedAtSlot, key: "receivedAt")
        }
        let (skew, dropped, part, parts) = try checked { () throws(FastBatchParser.Problem) in
            (
                try parser.optionalInt(slots[Field.skewMillis], key: "skewMillis") ?? 0,
                try parser.optionalInt(slots[Field.dropped], key: "dropped") ?? 0,
                try parser.optionalInt(slots[Field.part], key: "part") ?? 0,
                try parser.optionalInt(slots[Field.parts], key: "parts") ?? 1
            )
        }
        let collector = try optionalString(slots[Field.collector], parser: &parser) ?? ""
        guard part >= 0 && part < parts else { throw problem("part \(part) of \(parts)") }
        return CompactBatchRecord(
            fields: BatchRecordWriter.Batch(
                batchID: batchID, client: client, installHash: installHash, decodes: decodes,
                clientReport: clientReport, receivedAt: receivedAt, skewMillis: Int64(skew), collector: collector,
                dropped: dropped),
            part: part, parts: parts,
            table: EventTable(events: events, strings: strings, idBytes: idBytes))
    }

    /// A plain string field (`Codable`'s `String`: no limit, no identifier rule) that must be there.
    private static func requiredString(_ slot: Slot?, parser: inout FastBatchParser) throws(Failure) -> String {
        guard let slot, slot.type == .string else { throw problem("a required string is missing or not a string") }
        return parser.reader.string(slot, limit: .max)
    }

    /// An optional plain string field: nil when missing or null.
    private static func optionalString(_ slot: Slot?, parser: inout FastBatchParser) throws(Failure) -> String? {
        guard let slot, slot.type != .null else { return nil }
        guard slot.type == .string else { throw problem("a string field is not a string") }
        return parser.reader.string(slot, limit: .max)
    }

    /// `capabilities` as ``Capabilities/init(from:)`` reads it, from its `{` (at depth 2).
    private static func parseCapabilities(_ parser: inout FastBatchParser) throws(Failure) -> Capabilities {
        parser.reader.index += 1
        var version: Slot?
        var sawTypes = false
        var types: [String]?
        var isFirst = true
        while let key = try syntax({ () throws(JSONSyntaxError) in try parser.nextMember(isFirst: &isFirst) }) {
            switch parser.match(key, capabilityKeys) {
            case 0 where version == nil:
                version = try syntax { () throws(JSONSyntaxError) in try parser.reader.scanValue(depth: 2) }
            case 1 where !sawTypes:
                sawTypes = true
                guard parser.reader.peek == UInt8(ascii: "[") else {
                    let slot = try syntax { () throws(JSONSyntaxError) in try parser.reader.scanValue(depth: 2) }
                    guard slot.type == .null else { throw problem("registeredTypes is not an array") }
                    continue
                }
                parser.reader.index += 1
                var list: [String] = []
                var isFirstElement = true
                while try syntax({ () throws(JSONSyntaxError) in try parser.nextElement(isFirst: &isFirstElement) }) {
                    let element = try syntax { () throws(JSONSyntaxError) in try parser.reader.scanValue(depth: 3) }
                    guard element.type == .string else { throw problem("a registered type is not a string") }
                    let type = try checked { () throws(FastBatchParser.Problem) in
                        try parser.optionalIdentifier(element, key: "registeredTypes", interned: true)
                    }
                    if let type { list.append(type) }
                }
                types = list
            default:
                _ = try syntax { () throws(JSONSyntaxError) in try parser.reader.scanValue(depth: 2) }
            }
        }
        let maxSchemaVersion = try checked { () throws(FastBatchParser.Problem) in
            try parser.optionalInt(version, key: "maxSchemaVersion")
        }
        return Capabilities(maxSchemaVersion: maxSchemaVersion, registeredTypes: types)
    }

    /// `clientReport` as its synthesized `Decodable` reads it (strictly, unlike an ingest batch's), from its `{`
    /// (at depth 2): `discarded` required, each entry a `reason` string and an `events` integer.
    private static func parseClientReport(_ parser: inout FastBatchParser) throws(Failure) -> ClientReport {
        parser.reader.index += 1
        var discarded: [ClientReport.Discarded]?
        var sawDiscarded = false
        var isFirst = true
        while let key = try syntax({ () throws(JSONSyntaxError) in try parser.nextMember(isFirst: &isFirst) }) {
            guard parser.match(key, reportKeys) == 0, !sawDiscarded else {
                _ = try syntax { () throws(JSONSyntaxError) in try parser.reader.scanValue(depth: 2) }
                continue
            }
            sawDiscarded = true
            guard parser.reader.peek == UInt8(ascii: "[") else { throw problem("discarded is not an array") }
            parser.reader.index += 1
            var entries: [ClientReport.Discarded] = []
            var isFirstElement = true
            while try syntax({ () throws(JSONSyntaxError) in try parser.nextElement(isFirst: &isFirstElement) }) {
                guard parser.reader.peek == UInt8(ascii: "{") else {
                    throw problem("a discarded entry is not an object")
                }
                parser.reader.index += 1
                var reason: Slot?
                var events: Slot?
                var isFirstField = true
                while let field = try syntax({ () throws(JSONSyntaxError) in
                    try parser.nextMember(isFirst: &isFirstField)
                }) {
                    let value = try syntax { () throws(JSONSyntaxError) in try parser.reader.scanValue(depth: 4) }
                    switch parser.match(field, discardedKeys) {
                    case 0 where reason == nil: reason = value
                    case 1 where events == nil: events = value
                    default: break
                    }
                }
                guard let reason, reason.type == .string else { throw problem("a discarded reason is not a string") }
                guard let events, events.type != .null,
                    let count = try checked({ () throws(FastBatchParser.Problem) in
                        try parser.optionalInt(events, key: "events")
                    })
                else { throw problem("a discarded count is not an integer") }
                entries.append(
                    ClientReport.Discarded(reason: parser.reader.string(reason, limit: .max), events: count))
            }
            discarded = entries
        }
        guard let discarded else { throw problem("clientReport has no discarded list") }
        return ClientReport(discarded: discarded)
    }

    /// The `events` array from its `[`: every element an event ``DiagnosticEvent/init(from:)`` accepts, or the
    /// record is rejected.
    private static func parseEvents(
        _ parser: inout FastBatchParser, into events: inout [CompactEvent], strings: inout [String],
        idBytes: inout [UInt8]
    ) throws(Failure) {
        parser.reader.index += 1
        var isFirst = true
        while try syntax({ () throws(JSONSyntaxError) in try parser.nextElement(isFirst: &isFirst) }) {
            guard parser.reader.peek == UInt8(ascii: "{") else { throw problem("an event is not an object") }
            let found = try syntax { () throws(JSONSyntaxError) in
                try parser.parseEvent(into: &events, strings: &strings, idBytes: &idBytes)
            }
            if let found { throw .problem(found) }
        }
    }
}
