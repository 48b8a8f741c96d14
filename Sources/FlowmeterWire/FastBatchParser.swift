package import FlowmeterModels

/// The fast path's schema-aware walk over one batch document.
///
/// It reads the bytes once, decoding known keys in place and skipping (but validating) everything else. Semantic
/// problems are collected, not thrown, because a syntax error anywhere later must still win, as it does for
/// Foundation, which validates the whole document before decoding. Fields are then checked in the same fixed order
/// as the `Decodable` conformances, so both paths report the same first problem.
package struct FastBatchParser {
    package typealias Slot = ByteReader.Slot

    package var reader: ByteReader
    /// Reused per-object slot storage; `present` says which entries are filled.
    var slots: [Slot]
    /// Shares repeated event strings across the batch (and across batches, when the caller lends a kept one).
    package var interner: StringInterner
    /// The most elements `events` may hold; the one past it stops the parse (see ``exceededMaxEvents``).
    let maxEvents: Int
    /// Whether the parse stopped at the element past ``maxEvents``: the syntax error it threw is only the way out.
    var exceededMaxEvents = false
    /// The date of the last time parsed, which the next one in the batch nearly always shares.
    var dateCache = Timestamp.DatePrefixCache()

    package init(reader: ByteReader, maxEvents: Int = .max, interner: StringInterner = StringInterner()) {
        self.reader = reader
        self.maxEvents = maxEvents
        self.interner = interner
        self.slots = Array(repeating: Slot(type: .null, start: 0, end: 0, flag: false), count: 10)
    }

    static let batchKeys: [StaticString] = ["id", "sentAt", "client", "decodes", "events", "clientReport"]
    static let clientReportKeys: [StaticString] = ["discarded"]
    static let discardedKeys: [StaticString] = ["reason", "events"]
    static let clientKeys: [StaticString] = [
        "appID", "appVersion", "build", "platform", "osVersion", "sdkVersion", "installID", "buildConfiguration",
        "unknownPolicy", "capabilities",
    ]
    static let capabilityKeys: [StaticString] = ["maxSchemaVersion", "registeredTypes"]
    static let eventKeys: [StaticString] = [
        "kind", "occurredAt", "id", "widgetType", "codingPath", "message", "pageID", "surface", "backendRelease",
        "count",
    ]

    /// A problem found in a field: what code it maps to at batch level, and its message.
    package struct Problem: Error {
        package var code: BatchDecodingError.Code
        package var message: String
        /// The field the problem is in, when it is one field's value (an identifier that breaks the rule); it is
        /// appended to the reported path.
        package var field: String? = nil
    }

    // MARK: - Structure

    /// Moves to the next member of an object whose `{` was consumed; returns its key with the cursor on the value,
    /// or nil after consuming `}`.
    @inline(__always)
    package mutating func nextMember(isFirst: inout Bool) throws(JSONSyntaxError) -> Slot? {
        guard try moveToMember(isFirst: &isFirst) else { return nil }
        return try scanKey()
    }

    /// Moves past the comma before the next member (none before the first) to its opening quote; false after
    /// consuming `}`.
    @inline(__always)
    mutating func moveToMember(isFirst: inout Bool) throws(JSONSyntaxError) -> Bool {
        reader.skipWhitespace()
        if isFirst {
            isFirst = false
            if reader.peek == UInt8(ascii: "}") {
                reader.index += 1
                return false
            }
        } else if reader.peek == UInt8(ascii: ",") {
            reader.index += 1
            reader.skipWhitespace()
            if reader.peek == UInt8(ascii: "}") {
                reader.index += 1
                return false
            }
        } else if reader.peek == UInt8(ascii: "}") {
            reader.index += 1
            return false
        } else {
            throw reader.fail("Expected ',' or '}'")
        }
        return true
    }

    /// Scans the key at the cursor and the colon after it; returns the key with the cursor on the value.
    @inline(__always)
    package mutating func scanKey() throws(JSONSyntaxError) -> Slot {
        try reader.expect(UInt8(ascii: "\""))
        let start = reader.index
        let escaped = try reader.scanString()
        let key = Slot(type: .string, start: start, end: reader.index - 1, flag: escaped)
        reader.skipWhitespace()
        try reader.expect(UInt8(ascii: ":"))
        reader.skipWhitespace()
        return key
    }

    /// Moves to the next element of an array whose `[` was consumed; false after consuming `]`.
    @inline(__always)
    package mutating func nextElement(isFirst: inout Bool) throws(JSONSyntaxError) -> Bool {
        reader.skipWhitespace()
        let byte = reader.peek
        if isFirst {
            isFirst = false
            guard byte == UInt8(ascii: "]") else { return true }
        } else if byte == UInt8(ascii: ",") {
            reader.index += 1
            reader.skipWhitespace()
            // One trailing comma is allowed, as Foundation allows it; `[1,,]` fails in scanValue instead.
            guard reader.peek == UInt8(ascii: "]") else { return true }
        } else if byte != UInt8(ascii: "]") {
            throw reader.fail("Expected ',' or ']'")
        }
        reader.index += 1
        return false
    }

    /// The index of `key` in `keys`, or -1.
    @inline(__always)
    package mutating func match(_ key: Slot, _ keys: [StaticString]) -> Int {
        if key.flag {
            reader.unescape(key)
            return reader.scratch.withUnsafeBytes { bytes in
                for (position, candidate) in keys.enumerated()
                where candidate.utf8CodeUnitCount == bytes.count
                    && memoryEqual(candidate.utf8Start, bytes.baseAddress, bytes.count)
                {
                    return position
                }
                return -1
            }
        }
        let length = key.end - key.start
        for position in 0..<keys.count {
            let candidate = keys[position]
            if candidate.utf8CodeUnitCount == length
                && memoryEqual(candidate.utf8Start, UnsafeRawPointer(reader.base + key.start), length)
            {
                return position
            }
        }
        return -1
    }

    /// Moves to the next member of an event object, like ``nextMember(isFirst:)``, and returns the index of its key in
    /// ``eventKeys`` (-1 for another key) with the cursor on the value, or nil after consuming `}`.
    ///
    /// Encoders write a known key as `"kind":`, without escapes or whitespace before the colon: those are recognized
    /// by comparing the bytes after the quote a word at a time with the key's bytes, quote and colon (``KeyWord``),
    /// instead of scanning the key as a string and matching it afterwards. Anything else (an escaped, unknown or
    /// spaced key, or a document ending within 16 bytes) takes the general path, which reads the same key.
    ///
    /// Between members, compact JSON has the comma right before the quote: then the key is compared straight away,
    /// without the whitespace and closing-brace checks of ``moveToMember(isFirst:)``, which would find nothing else.
    @inline(__always)
    mutating func nextEventField(isFirst: inout Bool) throws(JSONSyntaxError) -> Int? {
        let comma = reader.index
        if !isFirst, comma + 18 <= reader.count,
            UnsafeRawPointer(reader.base + comma).loadUnaligned(as: UInt16.self) == 0x222C  // ,"
        {
            let bytes = UnsafeRawPointer(reader.base + comma + 2)
            let first = bytes.loadUnaligned(as: UInt64.self)
            let second = bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
            if let (field, length) = KeyWord.eventField(first, second) {
                reader.index = comma + 2 + length
                reader.skipWhitespace()
                return field
            }
        }
        guard try moveToMember(isFirst: &isFirst) else { return nil }
        let name = reader.index + 1
        if reader.peek == UInt8(ascii: "\""), name + 16 <= reader.count {
            let bytes = UnsafeRawPointer(reader.base + name)
            let first = bytes.loadUnaligned(as: UInt64.self)
            let second = bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
            if let (field, length) = KeyWord.eventField(first, second) {
                reader.index = name + length
                reader.skipWhitespace()
                return field
            }
        }
        return eventField(try scanKey())
    }

    /// The event field index of `key` (the order of `eventKeys`), or -1; a switch, since this runs per member.
    @inline(__always)
    mutating func eventField(_ key: Slot) -> Int {
        guard !key.flag else { return match(key, Self.eventKeys) }
        let start = UnsafeRawPointer(reader.base + key.start)
        @inline(__always) func equals(_ literal: StaticString) -> Bool {
            memoryEqual(literal.utf8Start, start, literal.utf8CodeUnitCount)
        }
        switch key.end - key.start {
        case 2: return equals("id") ? 2 : -1
        case 4: return equals("kind") ? 0 : -1
        case 5: return equals("count") ? 9 : -1
        case 6: return equals("pageID") ? 6 : -1
        case 7: return equals("message") ? 5 : equals("surface") ? 7 : -1
        case 10: return equals("widgetType") ? 3 : equals("codingPath") ? 4 : equals("occurredAt") ? 1 : -1
        case 14: return equals("backendRelease") ? 8 : -1
        default: return -1
        }
    }

    // MARK: - Batch

    /// Parses the batch; its events and their strings go into `storage`'s arrays, taken (left empty) and emptied
    /// first, so a caller's kept arrays save allocating two per batch.
    mutating func parse(
        storage: inout EventTableStorage
    ) throws(JSONSyntaxError) -> Result<CompactBatch, BatchDecodingError> {
        if reader.count >= 3 && reader.base[0] == 0xEF && reader.base[1] == 0xBB && reader.base[2] == 0xBF {
            reader.index = 3
        }
        reader.skipWhitespace()
        guard reader.peek == UInt8(ascii: "{") else {
            let value = try reader.scanValue(depth: 0)
            try finish()
            return .failure(batchError(.typeMismatch, "", expected: "Object", key: nil, found: value.type))
        }
        reader.index += 1
        var id: Slot?
        var sentAt: Slot?
        var decodes: Slot?
        var client: Result<ClientInfo, BatchDecodingError>?
        var eventsSlot: Slot?
        var sawEvents = false
        var sawReport = false
        var clientReport: ClientReport?
        var taken = storage
        storage = EventTableStorage()
        taken.removeAll()
        var events = taken.events
        var strings = taken.strings
        var idBytes = taken.idBytes
        taken = EventTableStorage()
        interner.beginBatch()
        var dropped: [DecodeDiagnostic] = []
        var droppedIndices: [Int] = []
        var isFirst = true
        while let key = try nextMember(isFirst: &isFirst) {
            switch match(key, Self.batchKeys) {
            case 0 where id == nil: id = try reader.scanValue(depth: 1)
            case 1 where sentAt == nil: sentAt = try reader.scanValue(depth: 1)
            case 2 where client == nil:
                if reader.peek == UInt8(ascii: "{") {
                    client = try parseClient()
                } else {
                    let value = try reader.scanValue(depth: 1)
                    client = .failure(
                        batchError(.typeMismatch, "", expected: "Object", key: "client", found: value.type))
                }
            case 3 where decodes == nil: decodes = try reader.scanValue(depth: 1)
            case 4 where !sawEvents:
                sawEvents = true
                if reader.peek == UInt8(ascii: "[") {
                    try parseEvents(
                        into: &events, strings: &strings, idBytes: &idBytes, dropped: &dropped,
                        droppedIndices: &droppedIndices)
                } else {
                    eventsSlot = try reader.scanValue(depth: 1)
                }
            case 5 where !sawReport:
                sawReport = true
                clientReport = try parseClientReport()
            default: _ = try reader.scanValue(depth: 1)
            }
        }
        try finish()

        do throws(Problem) {
            let batchID = try optionalIdentifier(id, key: "id")
            var sentTime: Timestamp?
            if let sentAt, sentAt.type != .null {
                sentTime = try timestamp(sentAt, key: "sentAt")
            }
            guard let client else { throw Problem(code: .missingKey, message: DecodeMessages.missingKey("client")) }
            let info: ClientInfo
            switch client {
            case .success(let value): info = value
            case .failure(let error): return .failure(error)
            }
            let decodeCount = try optionalInt(decodes, key: "decodes")
            guard sawEvents else { throw Problem(code: .missingKey, message: DecodeMessages.missingKey("events")) }
            if let eventsSlot {
                throw mismatch(expected: "Array", key: "events", found: eventsSlot.type)
            }
            let header = DiagnosticBatch(
                id: batchID, sentAt: sentTime, client: info, decodes: decodeCount, events: [],
                clientReport: clientReport)
            return .success(
                CompactBatch(
                    header: header, table: EventTable(events: events, strings: strings, idBytes: idBytes),
                    dropped: dropped, droppedIndices: droppedIndices))
        } catch {
            return .failure(BatchDecodingError(error.code, error.message, path: error.field ?? ""))
        }
    }

    /// Requires only whitespace after the top-level value.
    package mutating func finish() throws(JSONSyntaxError) {
        reader.skipWhitespace()
        guard reader.index == reader.count else { throw reader.fail("Unexpected data after the top-level value") }
    }

    func batchError(
        _ code: BatchDecodingError.Code, _ path: String, expected: String, key: String?, found: ByteReader.ValueType
    ) -> BatchDecodingError {
        BatchDecodingError(
            code, DecodeMessages.typeMismatch(expected: expected, key: key, found: found.name), path: path)
    }

    // MARK: - Client

    mutating func parseClient() throws(JSONSyntaxError) -> Result<ClientInfo, BatchDecodingError> {
        reader.index += 1
        var present: UInt16 = 0
        var capabilities: Result<Capabilities, BatchDecodingError>?
        var isFirst = true
        while let key = try nextMember(isFirst: &isFirst) {
            let field = match(key, Self.clientKeys)
            if field >= 0 && present & (1 << field) == 0 {
                present |= 1 << field
                if field == 9 && reader.peek == UInt8(ascii: "{") {
                    capabilities = try parseCapabilities()
                } else {
                    slots[field] = try reader.scanValue(depth: 2)
                }
            } else {
                _ = try reader.scanValue(depth: 2)
            }
        }
        do throws(Problem) {
            func slot(_ field: Int) -> Slot? { present & (1 << field) == 0 ? nil : slots[field] }
            // Interned: every batch of an app build repeats them (never the install ID, which stays out of any cache).
            let appID = try requiredIdentifier(slot(0), key: "appID")
            let appVersion = try requiredIdentifier(slot(1), key: "appVersion")
            let build = try optionalIdentifier(slot(2), key: "build", interned: true)
            let platform = try requiredIdentifier(slot(3), key: "platform")
            let osVersion = try optionalIdentifier(slot(4), key: "osVersion", interned: true)
            let sdkVersion = try optionalIdentifier(slot(5), key: "sdkVersion", interned: true)
            let installID = try optionalIdentifier(slot(6), key: "installID")
            let configuration = try optionalIdentifier(slot(7), key: "buildConfiguration", interned: true)
            let policy = try optionalIdentifier(slot(8), key: "unknownPolicy", interned: true)
            var header: Capabilities?
            if let capabilities {
                switch capabilities {
                case .success(let value): header = value
                case .failure(let error): return .failure(error)
                }
            } else if let value = slot(9), value.type != .null {
                throw mismatch(expected: "Object", key: "capabilities", found: value.type)
            }
            return .success(
                ClientInfo(
                    appID: appID, appVersion: appVersion, build: build, platform: platform, osVersion: osVersion,
                    sdkVersion: sdkVersion, installID: installID,
                    buildConfiguration: configuration.map(BuildConfiguration.init(wireValue:)) ?? .release,
                    unknownPolicy: policy.flatMap(UnknownPolicy.init(rawValue:)), capabilities: header))
        } catch {
            return .failure(
                BatchDecodingError(error.code, error.message, path: error.field.map { "client.\($0)" } ?? "client"))
        }
    }

    package mutating func parseCapabilities() throws(JSONSyntaxError) -> Result<Capabilities, BatchDecodingError> {
        reader.index += 1
        var maxSchemaVersion: Slot?
        var sawTypes = false
        var typesSlot: Slot?
        var types: [String] = []
        var badType: (index: Int, type: ByteReader.ValueType)?
        var badIdentifier: (index: Int, violation: IdentifierRule.Violation)?
        var isFirst = true
        while let key = try nextMember(isFirst: &isFirst) {
            switch match(key, Self.capabilityKeys) {
            case 0 where maxSchemaVersion == nil: maxSchemaVersion = try reader.scanValue(depth: 3)
            case 1 where !sawTypes:
                sawTypes = true
                guard reader.peek == UInt8(ascii: "[") else {
                    typesSlot = try reader.scanValue(depth: 3)
                    continue
                }
                reader.index += 1
                var index = 0
                var isFirstElement = true
                while try nextElement(isFirst: &isFirstElement) {
                    let element = try reader.scanValue(depth: 4)
                    if element.type == .string {
                        guard badType == nil && badIdentifier == nil else { continue }
                        let (type, violation) = reader.identifier(
                            element, limit: FieldLimits.other, interner: &interner)
                        if let violation {
                            badIdentifier = (index, violation)
                        } else {
                            types.append(type)
                        }
                    } else if badType == nil && badIdentifier == nil {
                        badType = (index, element.type)
                    }
                    index += 1
                }
            default: _ = try reader.scanValue(depth: 3)
            }
        }
        do throws(Problem) {
            let version = try optionalInt(maxSchemaVersion, key: "maxSchemaVersion")
            if let typesSlot, typesSlot.type != .null {
                throw mismatch(expected: "Array", key: "registeredTypes", found: typesSlot.type)
            }
            if let badType {
                return .failure(
                    batchError(
                        .typeMismatch, "client.capabilities.registeredTypes.Index \(badType.index)",
                        expected: "String", key: nil, found: badType.type))
            }
            if let badIdentifier {
                return .failure(
                    BatchDecodingError(
                        .invalidValue, badIdentifier.violation.message(key: "registeredTypes"),
                        path: "client.capabilities.registeredTypes.Index \(badIdentifier.index)"))
            }
            return .success(
                Capabilities(maxSchemaVersion: version, registeredTypes: sawTypes && typesSlot == nil ? types : nil))
        } catch {
            return .failure(BatchDecodingError(error.code, error.message, path: "client.capabilities"))
        }
    }

    // MARK: - Client report

    /// Reads `clientReport` leniently (see ``ClientReport``): a wrong shape anywhere is ignored, never an error.
    mutating func parseClientReport() throws(JSONSyntaxError) -> ClientReport? {
        guard reader.peek == UInt8(ascii: "{") else {
            _ = try reader.scanValue(depth: 1)
            return nil
        }
        reader.index += 1
        var entries: [ClientReport.Discarded] = []
        var sawDiscarded = false
        var isFirst = true
        while let key = try nextMember(isFirst: &isFirst) {
            guard match(key, Self.clientReportKeys) == 0, !sawDiscarded else {
                _ = try reader.scanValue(depth: 2)
                continue
            }
            sawDiscarded = true
            guard reader.peek == UInt8(ascii: "[") else {
                _ = try reader.scanValue(depth: 2)
                continue
            }
            reader.index += 1
            var looked = 0
            var isFirstElement = true
            while try nextElement(isFirst: &isFirstElement) {
                looked += 1
                guard looked <= ClientReport.maxEntries, reader.peek == UInt8(ascii: "{") else {
                    _ = try reader.scanValue(depth: 3)
                    continue
                }
                reader.index += 1
                var reason: Slot?
                var count: Slot?
                var isFirstField = true
                while let field = try nextMember(isFirst: &isFirstField) {
                    switch match(field, Self.discardedKeys) {
                    case 0 where reason == nil: reason = try reader.scanValue(depth: 4)
                    case 1 where count == nil: count = try reader.scanValue(depth: 4)
                    default: _ = try reader.scanValue(depth: 4)
                    }
                }
                guard let reason, reason.type == .string, let count, count.type == .number,
                    let events = reader.int(count), events >= 0
                else { continue }
                let text = reader.string(reason, limit: FieldLimits.other)
                guard IdentifierRule.violation(in: text) == nil else { continue }
                entries.append(ClientReport.Discarded(reason: text, events: events))
            }
        }
        return entries.isEmpty ? nil : ClientReport(discarded: entries)
    }

    // MARK: - Events

    mutating func parseEvents(
        into events: inout [CompactEvent], strings: inout [String], idBytes: inout [UInt8],
        dropped: inout [DecodeDiagnostic], droppedIndices: inout [Int]
    ) throws(JSONSyntaxError) {
        reader.index += 1
        events.reserveCapacity(64)
        var index = 0
        var isFirst = true
        while try nextElement(isFirst: &isFirst) {
            if index == maxEvents {
                exceededMaxEvents = true
                throw reader.fail("More than \(maxEvents) events")
            }
            if reader.peek == UInt8(ascii: "{") {
                if let problem = try parseEvent(into: &events, strings: &strings, idBytes: &idBytes) {
                    let path = problem.field.map { "events.Index \(index).\($0)" } ?? "events.Index \(index)"
                    dropped.append(DecodeDiagnostic(path: path, message: problem.message))
                    droppedIndices.append(index)
                }
            } else {
                let value = try reader.scanValue(depth: 2)
                dropped.append(
                    DecodeDiagnostic(
                        path: "events.Index \(index)",
                        message: DecodeMessages.typeMismatch(expected: "Object", key: nil, found: value.type.name)))
                droppedIndices.append(index)
            }
            index += 1
        }
    }

    /// Scans an event field's value at depth 3, as ``ByteReader/scanValue(depth:)`` does: a string (what nearly every
    /// field holds) is scanned here, without the call and the switch over every JSON type, and so is a one-digit
    /// number followed by `,` or `}` (a `count` of 1 to 9), which ``ByteReader/scanNumber()`` would find the same.
    @inline(__always)
    mutating func scanEventValue() throws(JSONSyntaxError) -> Slot {
        let start = reader.index
        if start + 1 < reader.count {
            let digit = reader.base[start] &- UInt8(ascii: "0")
            let next = reader.base[start + 1]
            if digit <= 9 && (next == UInt8(ascii: ",") || next == UInt8(ascii: "}")) {
                reader.index = start + 1
                return Slot(type: .number, start: start, end: start + 1, flag: false)
            }
        }
        guard reader.peek == UInt8(ascii: "\"") else { return try reader.scanValue(depth: 3) }
        reader.index += 1
        let escaped = try reader.scanString()
        return Slot(type: .string, start: start + 1, end: reader.index - 1, flag: escaped)
    }

    /// Parses one event object and appends it to `events`, its strings to `strings`, or returns the problem that
    /// drops it (no `Result` of an event to build and take apart per event). A dropped event may leave entries in
    /// `strings` that no event names.
    package mutating func parseEvent(
        into events: inout [CompactEvent], strings: inout [String], idBytes: inout [UInt8]
    ) throws(JSONSyntaxError) -> Problem? {
        reader.index += 1
        // The fields' values in locals, not `slots`: no array to check for uniqueness and bounds per value, and no
        // out-of-line accessor per field. The first of a repeated key is kept; every value is scanned all the same.
        var kindValue: Slot?
        var occurredAtValue: Slot?
        var idValue: Slot?
        var widgetTypeValue: Slot?
        var codingPathValue: Slot?
        var messageValue: Slot?
        var pageIDValue: Slot?
        var surfaceValue: Slot?
        var backendReleaseValue: Slot?
        var countValue: Slot?
        var isFirst = true
        while let field = try nextEventField(isFirst: &isFirst) {
            let value = try scanEventValue()
            switch field {
            case 0 where kindValue == nil: kindValue = value
            case 1 where occurredAtValue == nil: occurredAtValue = value
            case 2 where idValue == nil: idValue = value
            case 3 where widgetTypeValue == nil: widgetTypeValue = value
            case 4 where codingPathValue == nil: codingPathValue = value
            case 5 where messageValue == nil: messageValue = value
            case 6 where pageIDValue == nil: pageIDValue = value
            case 7 where surfaceValue == nil: surfaceValue = value
            case 8 where backendReleaseValue == nil: backendReleaseValue = value
            case 9 where countValue == nil: countValue = value
            default: break
            }
        }
        do throws(Problem) {
            guard let kindSlot = kindValue else {
                throw Problem(code: .missingKey, message: DecodeMessages.missingKey("kind"))
            }
            guard kindSlot.type != .null else { throw mismatch(expected: "String", key: "kind", found: .null) }
            let kind = try identifierIndex(kindSlot, key: "kind", strings: &strings)
            guard let time = occurredAtValue else {
                throw Problem(code: .missingKey, message: DecodeMessages.missingKey("occurredAt"))
            }
            let occurredAt = try timestamp(time, key: "occurredAt")
            // Each event's own: never through the interner, which would only fill with values that never repeat, and
            // kept as bytes (see ``CompactEvent/id``). A dropped event may leave its id's bytes unnamed.
            var id = CompactEvent.absent
            if let idSlot = idValue, idSlot.type != .null {
                guard idSlot.type == .string else { throw mismatch(expected: "String", key: "id", found: idSlot.type) }
                let start = idBytes.count
                if let violation = reader.appendIdentifier(idSlot, limit: FieldLimits.other, to: &idBytes) {
                    throw invalid(violation, key: "id")
                }
                id = Int32(start)
            }
            let widgetType = try identifierIndex(
                widgetTypeValue, key: "widgetType", limit: FieldLimits.widgetType, strings: &strings)
            let codingPath = try stringIndex(
                codingPathValue, key: "codingPath", limit: FieldLimits.codingPath, strings: &strings)
            let message = try stringIndex(messageValue, key: "message", limit: FieldLimits.message, strings: &strings)
            let pageID = try identifierIndex(pageIDValue, key: "pageID", strings: &strings)
            let surface = try identifierIndex(surfaceValue, key: "surface", strings: &strings)
            let backendRelease = try identifierIndex(backendReleaseValue, key: "backendRelease", strings: &strings)
            let count = try optionalInt(countValue, key: "count") ?? 1
            guard count >= 1 else {
                throw Problem(code: .invalidValue, message: DecodeMessages.invalidCount(count, key: "count"))
            }
            events.append(
                CompactEvent(
                    kind: kind, widgetType: widgetType, codingPath: codingPath, message: message, pageID: pageID,
                    surface: surface, backendRelease: backendRelease, id: id, count: count, occurredAt: occurredAt))
            return nil
        } catch {
            return error
        }
    }

    /// An optional identifier field as an index into the batch's strings (``CompactEvent/absent`` for a missing
    /// or null one), through the interner.
    @inline(__always)
    mutating func identifierIndex(
        _ slot: Slot?, key: String, limit: Int = FieldLimits.other, strings: inout [String]
    ) throws(Problem) -> Int32 {
        guard let slot, slot.type != .null else { return CompactEvent.absent }
        guard slot.type == .string else { throw mismatch(expected: "String", key: key, found: slot.type) }
        let (index, violation) = reader.identifierIndex(slot, limit: limit, interner: &interner, table: &strings)
        if let violation { throw invalid(violation, key: key) }
        return index
    }

    /// An optional free-text field as an index into the batch's strings, through the interner.
    @inline(__always)
    mutating func stringIndex(
        _ slot: Slot?, key: String, limit: Int, strings: inout [String]
    ) throws(Problem) -> Int32 {
        guard let slot, slot.type != .null else { return CompactEvent.absent }
        guard slot.type == .string else { throw mismatch(expected: "String", key: key, found: slot.type) }
        return reader.stringIndex(slot, limit: limit, interner: &interner, table: &strings)
    }

    // MARK: - Fields

    package func mismatch(expected: String, key: String, found: ByteReader.ValueType) -> Problem {
        Problem(
            code: .typeMismatch,
            message: DecodeMessages.typeMismatch(expected: expected, key: key, found: found.name))
    }

    package mutating func optionalString(_ slot: Slot?, key: String, limit: Int) throws(Problem) -> String? {
        guard let slot, slot.type != .null else { return nil }
        guard slot.type == .string else { throw mismatch(expected: "String", key: key, found: slot.type) }
        return reader.string(slot, limit: limit)
    }

    /// The problem a field that breaks ``IdentifierRule`` reports, naming the field.
    func invalid(_ violation: IdentifierRule.Violation, key: String) -> Problem {
        Problem(code: .invalidValue, message: violation.message(key: key), field: key)
    }

    /// `value` when it is an identifier under ``IdentifierRule``; otherwise the problem, naming the field.
    func identifier(_ value: String, key: String) throws(Problem) -> String {
        if let violation = IdentifierRule.violation(in: value) { throw invalid(violation, key: key) }
        return value
    }

    /// A string slot's identifier through the interner, which remembers a cached string's verdict.
    mutating func internedIdentifier(_ slot: Slot, key: String, limit: Int) throws(Problem) -> String {
        let (value, violation) = reader.identifier(slot, limit: limit, interner: &interner)
        if let violation { throw invalid(violation, key: key) }
        return value
    }

    package mutating func optionalIdentifier(
        _ slot: Slot?, key: String, limit: Int = FieldLimits.other, interned: Bool = false
    ) throws(Problem) -> String? {
        if interned, let slot, slot.type == .string { return try internedIdentifier(slot, key: key, limit: limit) }
        guard let value = try optionalString(slot, key: key, limit: limit) else { return nil }
        return try identifier(value, key: key)
    }

    /// A required string field that must be an identifier, through the interner: missing is `missingKey`, any
    /// other type (null too) a mismatch.
    package mutating func requiredIdentifier(_ slot: Slot?, key: String) throws(Problem) -> String {
        guard let slot else { throw Problem(code: .missingKey, message: DecodeMessages.missingKey(key)) }
        guard slot.type == .string else { throw mismatch(expected: "String", key: key, found: slot.type) }
        return try internedIdentifier(slot, key: key, limit: FieldLimits.other)
    }

    package mutating func optionalInt(_ slot: Slot?, key: String) throws(Problem) -> Int? {
        guard let slot, slot.type != .null else { return nil }
        guard slot.type == .number, let value = reader.int(slot) else {
            throw mismatch(expected: "Int", key: key, found: slot.type)
        }
        return value
    }

    package mutating func timestamp(_ slot: Slot, key: String) throws(Problem) -> Timestamp {
        guard slot.type == .string else { throw mismatch(expected: "String", key: key, found: slot.type) }
        let parsed: Timestamp?
        if !slot.flag {
            // The bytes as they are (what nearly every time is): parsed in place, the cache updated where it is.
            let bytes = UnsafeRawBufferPointer(start: reader.base + slot.start, count: slot.end - slot.start)
            parsed = Timestamp.parse(bytes, cache: &dateCache)
        } else {
            var cache = dateCache
            parsed = reader.withBytes(slot) { Timestamp.parse($0, cache: &cache) }
            dateCache = cache
        }
        if let time = parsed { return time }
        throw Problem(
            code: .invalidValue,
            message: DecodeMessages.invalidTime(reader.string(slot, limit: FieldLimits.quotedValue), key: key))
    }
}

/// Whether the `count` bytes at `left` and `right` are the same: sixteen bytes (two words a side, their differences
/// ored) per step, the last partial step read as the final sixteen bytes (overlapping what was compared), so a
/// 40-byte coding path is three steps, not 40 byte compares; 8 to 16 bytes are two overlapping words a side. Never
/// reads outside either range. Used per member key and per interned value, so it stays inline.
@inline(__always)
func memoryEqual(_ left: UnsafePointer<UInt8>, _ right: UnsafeRawPointer?, _ count: Int) -> Bool {
    guard let right else { return count == 0 }
    let left = UnsafeRawPointer(left)
    @inline(__always) func difference(_ offset: Int) -> UInt64 {
        left.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            ^ right.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
    }
    if count >= 16 {
        var offset = 0
        while offset + 16 <= count {
            guard difference(offset) | difference(offset + 8) == 0 else { return false }
            offset += 16
        }
        return offset == count || difference(count - 16) | difference(count - 8) == 0
    }
    if count >= 8 {
        return difference(0) | difference(count - 8) == 0
    }
    if count >= 4 {
        return left.loadUnaligned(as: UInt32.self) == right.loadUnaligned(as: UInt32.self)
            && left.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)
                == right.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)
    }
    for offset in 0..<count
    where left.load(fromByteOffset: offset, as: UInt8.self) != right.load(fromByteOffset: offset, as: UInt8.self) {
        return false
    }
    return true
}

/// The event keys of ``FastBatchParser/eventKeys`` as compact JSON writes them after the opening quote (`kind":`),
/// read as little-endian words: what ``FastBatchParser/nextEventField(isFirst:)`` compares the bytes after a quote
/// with. `KeyWordTests` checks every constant against its key's bytes.
enum KeyWord {
    static let id: UInt64 = 0x3A22_6469  // id":
    static let kind: UInt64 = 0x3A22_646E_696B  // kind":
    static let count: UInt64 = 0x3A_2274_6E75_6F63  // count":
    static let pageID: UInt64 = 0x3A22_4449_6567_6170  // pageID":
    static let message: UInt64 = 0x2265_6761_7373_656D  // message"
    static let surface: UInt64 = 0x2265_6361_6672_7573  // surface"
    static let widgetTy: UInt64 = 0x7954_7465_6764_6977  // widgetTy
    static let pe: UInt64 = 0x3A22_6570  // pe":
    static let codingPa: UInt64 = 0x6150_676E_6964_6F63  // codingPa
    static let th: UInt64 = 0x3A22_6874  // th":
    static let occurred: UInt64 = 0x6465_7272_7563_636F  // occurred
    static let at: UInt64 = 0x3A22_7441  // At":
    static let backendR: UInt64 = 0x5264_6E65_6B63_6162  // backendR
    static let elease: UInt64 = 0x3A22_6573_6165_6C65  // elease":

    /// The field index in ``FastBatchParser/eventKeys`` and the length through the colon of the key whose bytes
    /// after the opening quote begin with the little-endian words `first` and `second`, or nil when they do not
    /// spell one of them followed by `":`.
    @inline(__always)
    static func eventField(_ first: UInt64, _ second: UInt64) -> (field: Int, length: Int)? {
        let low4: UInt64 = 0xFFFF_FFFF
        switch UInt8(truncatingIfNeeded: first) {
        case UInt8(ascii: "k"):
            return first & 0xFFFF_FFFF_FFFF == kind ? (0, 6) : nil
        case UInt8(ascii: "o"):
            return first == occurred && second & low4 == at ? (1, 12) : nil
        case UInt8(ascii: "i"):
            return first & low4 == id ? (2, 4) : nil
        case UInt8(ascii: "w"):
            return first == widgetTy && second & low4 == pe ? (3, 12) : nil
        case UInt8(ascii: "c"):
            if first == codingPa { return second & low4 == th ? (4, 12) : nil }
            return first & 0xFF_FFFF_FFFF_FFFF == count ? (9, 7) : nil
        case UInt8(ascii: "m"):
            return first == message && UInt8(truncatingIfNeeded: second) == UInt8(ascii: ":") ? (5, 9) : nil
        case UInt8(ascii: "p"):
            return first == pageID ? (6, 8) : nil
        case UInt8(ascii: "s"):
            return first == surface && UInt8(truncatingIfNeeded: second) == UInt8(ascii: ":") ? (7, 9) : nil
        case UInt8(ascii: "b"):
            return first == backendR && second == elease ? (8, 16) : nil
        default:
            return nil
        }
    }
}
