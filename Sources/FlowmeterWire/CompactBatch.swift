public import FlowmeterModels

/// One event of an ``EventTable``: every string field is an index into the table's ``EventTable/strings`` (the id,
/// which no other event repeats, a range of its ``EventTable/idBytes``), so the event holds no reference and copying
/// it is a copy of its bytes.
///
/// The collector's ingest path decodes into these (``FastBatchDecoder/decodeCompact(_:maxEvents:interner:storage:)``):
/// a `DiagnosticEvent` of eight `String`s was copied, retained and released as a whole (eight atomic operations
/// each way) wherever the compiler could not prove a borrow, on the decoding thread and again on the one that
/// records its rollups. A batch's repeated values (its kinds, widget types, coding paths) are one entry of the table
/// however many events share them, so the places that work per value (escaping it for the record, digesting it for
/// the rollups' series) can work once per entry rather than once per event.
///
/// Only this module makes them (the decoder, ``EventTable/init(_:)``), so an event's kind index always names a
/// string that passed ``IdentifierRule`` in its own table.
public struct CompactEvent: Hashable, Sendable {
    /// The index of an absent optional field.
    public static let absent: Int32 = -1

    // Declared in the order of the memberwise initializer the decoder and ``EventTable/init(_:)`` call; optional
    // fields default to ``absent``.
    /// The kind's entry; always present.
    public internal(set) var kind: Int32
    public internal(set) var widgetType: Int32 = absent
    public internal(set) var codingPath: Int32 = absent
    public internal(set) var message: Int32 = absent
    public internal(set) var pageID: Int32 = absent
    public internal(set) var surface: Int32 = absent
    public internal(set) var backendRelease: Int32 = absent
    /// Where the event's own id sits in the table's ``EventTable/idBytes`` (its length, then its bytes), or
    /// ``absent``.
    ///
    /// Ids are kept as their UTF-8 bytes, not as table strings: 60 % of the benchmark's events carry a 36-byte UUID,
    /// and making, checking and later freeing a `String` of each was most of the strings the decoder allocated, for a
    /// value only the record writer reads (as bytes). ``EventTable/id(of:)`` makes the `String` when asked.
    public internal(set) var id: Int32 = absent
    /// How many times the app saw it; at least 1.
    public internal(set) var count: Int = 1
    /// When the app saw it first.
    public internal(set) var occurredAt: Timestamp
}

/// Events as ``CompactEvent``s and the one table of strings their indices name.
///
/// A repeated value is usually one entry, but two entries may hold the same string (one longer than the interner
/// keeps, or two values that share an interner slot), and an entry may be named by no event (one of a dropped
/// event). Code that keys by a value compares strings, never indices, across entries.
public struct EventTable: Sendable {
    /// The events, in their original order.
    public private(set) var events: [CompactEvent]
    /// The strings the events' indices name.
    public private(set) var strings: [String]
    /// The events' ids, one after the other, each its length (two bytes, little-endian) and then its UTF-8 (valid,
    /// unescaped, an identifier under ``IdentifierRule``); an event's ``CompactEvent/id`` is where its own starts.
    /// The length lives here rather than in the event, which would grow past 56 bytes.
    public private(set) var idBytes: [UInt8]

    /// Appends `utf8` (at most 65,535 bytes) to `bytes` as an id of ``idBytes``; returns where it starts.
    static func appendID(_ utf8: some Collection<UInt8>, to bytes: inout [UInt8]) -> Int32 {
        let start = bytes.count
        let count = utf8.count
        precondition(count <= Int(UInt16.max), "EventTable: an id longer than 65,535 bytes")
        bytes.append(UInt8(truncatingIfNeeded: count))
        bytes.append(UInt8(truncatingIfNeeded: count >> 8))
        bytes.append(contentsOf: utf8)
        return Int32(start)
    }

    package init(events: [CompactEvent], strings: [String], idBytes: [UInt8]) {
        self.events = events
        self.strings = strings
        self.idBytes = idBytes
    }

    /// `events` with a table entry per string field (not shared: canonically equivalent strings compare equal as
    /// `String`s, and an event must keep its own spelling); how the callers that hold full events (tests, the CLI's
    /// simulations) reach the compact paths.
    public init(_ events: [DiagnosticEvent]) {
        var strings: [String] = []
        var idBytes: [UInt8] = []
        func index(_ value: String?) -> Int32 {
            guard let value else { return CompactEvent.absent }
            strings.append(value)
            return Int32(strings.count - 1)
        }
        self.events = events.map { event in
            let id = event.id.map { Self.appendID($0.utf8, to: &idBytes) } ?? CompactEvent.absent
            return CompactEvent(
                kind: index(event.kind.rawValue), widgetType: index(event.widgetType),
                codingPath: index(event.codingPath), message: index(event.message), pageID: index(event.pageID),
                surface: index(event.surface), backendRelease: index(event.backendRelease), id: id,
                count: event.count, occurredAt: event.occurredAt)
        }
        self.strings = strings
        self.idBytes = idBytes
    }

    public var count: Int { events.count }
    public var isEmpty: Bool { events.isEmpty }

    /// The string at `index`, or nil for ``CompactEvent/absent``.
    @inline(__always)
    public func string(_ index: Int32) -> String? {
        index < 0 ? nil : strings[Int(index)]
    }

    /// The id of `event`, one of this table's events, or nil when it has none.
    public func id(of event: CompactEvent) -> String? {
        guard event.id >= 0 else { return nil }
        return String(decoding: idBytes[Self.idRange(at: event.id, in: idBytes)], as: UTF8.self)
    }

    /// Where the UTF-8 of the id that starts at `offset` (a ``CompactEvent/id``, not absent) lies in `bytes`, a
    /// table's ``idBytes``: after its two-byte length.
    @inline(__always)
    static func idRange(at offset: Int32, in bytes: [UInt8]) -> Range<Int> {
        let start = Int(offset)
        return start + 2..<start + 2 + (Int(bytes[start]) | Int(bytes[start + 1]) << 8)
    }

    /// The kind of `event`, one of this table's events.
    @inline(__always)
    public func kind(of event: CompactEvent) -> DiagnosticKind {
        DiagnosticKind(unchecked: strings[Int(event.kind)])
    }

    /// `event`, one of this table's events, as a `DiagnosticEvent`.
    public func diagnosticEvent(_ event: CompactEvent) -> DiagnosticEvent {
        DiagnosticEvent(
            id: id(of: event), kind: kind(of: event), widgetType: string(event.widgetType),
            codingPath: string(event.codingPath), message: string(event.message), pageID: string(event.pageID),
            surface: string(event.surface), backendRelease: string(event.backendRelease), count: event.count,
            occurredAt: event.occurredAt)
    }

    /// The events as `DiagnosticEvent`s.
    public var diagnosticEvents: [DiagnosticEvent] {
        events.map(diagnosticEvent)
    }

    /// Removes the events at `offsets`, which must be ascending; the table keeps every entry.
    public mutating func removeEvents(atAscendingOffsets offsets: [Int]) {
        guard !offsets.isEmpty else { return }
        var kept: [CompactEvent] = []
        kept.reserveCapacity(events.count - offsets.count)
        var next = 0
        for offset in events.indices {
            if next < offsets.count && offsets[next] == offset {
                next += 1
            } else {
                kept.append(events[offset])
            }
        }
        events = kept
    }
}

/// The arrays of a finished batch's ``EventTable``, for a later decode to empty and fill in place
/// (``FastBatchDecoder/decodeCompact(_:maxEvents:interner:storage:)``): the collector keeps them between batches
/// (its `EventStoragePool`), so a decode allocates neither per batch.
public struct EventTableStorage: Sendable {
    var events: [CompactEvent]
    var strings: [String]
    var idBytes: [UInt8]

    /// Empty arrays, with no capacity.
    public init() {
        events = []
        strings = []
        idBytes = []
    }

    init(events: [CompactEvent], strings: [String], idBytes: [UInt8]) {
        self.events = events
        self.strings = strings
        self.idBytes = idBytes
    }

    /// How many events the events array holds room for.
    public var eventCapacity: Int { events.capacity }
    /// How many entries the strings array holds room for.
    public var stringCapacity: Int { strings.capacity }
    /// How many bytes of ids the ids array holds room for.
    public var idByteCapacity: Int { idBytes.capacity }
    /// Whether the arrays are empty.
    public var isEmpty: Bool { events.isEmpty && strings.isEmpty && idBytes.isEmpty }

    /// Empties the arrays, keeping their memory when nothing else holds it: what a decode does first.
    public mutating func removeAll() {
        events.removeAll(keepingCapacity: true)
        strings.removeAll(keepingCapacity: true)
        idBytes.removeAll(keepingCapacity: true)
    }

    /// The memory address of the events array's elements (the tests check that storage is reused).
    public var eventsAddress: UnsafeRawPointer? {
        events.withUnsafeBufferPointer { $0.baseAddress.map(UnsafeRawPointer.init) }
    }
}

extension EventTable {
    /// The table's arrays, for a later decode to reuse (see ``EventTableStorage``).
    public var storage: EventTableStorage {
        EventTableStorage(events: events, strings: strings, idBytes: idBytes)
    }
}

/// A decoded batch whose events are an ``EventTable``.
///
/// ``decoded`` turns it into the ``DecodedBatch`` of `DiagnosticEvent`s that ``CodableBatchDecoder`` makes: the
/// reference every test and fuzz target holds the fast path to.
public struct CompactBatch: Sendable {
    /// The batch's own fields; its `events` are empty (they are ``table``'s).
    public var header: DiagnosticBatch
    /// The accepted events and their strings.
    public var table: EventTable
    /// One report per dropped event, in their original order.
    public var dropped: [DecodeDiagnostic]
    /// Where each dropped event sat in `events` as sent (see ``DecodedBatch/droppedIndices``).
    public var droppedIndices: [Int]

    init(header: DiagnosticBatch, table: EventTable, dropped: [DecodeDiagnostic], droppedIndices: [Int]) {
        precondition(dropped.count == droppedIndices.count, "one position per dropped event")
        self.header = header
        self.table = table
        self.dropped = dropped
        self.droppedIndices = droppedIndices
    }

    /// The batch `decoded` holds, its events made compact (see ``EventTable/init(_:)``).
    public init(_ decoded: DecodedBatch) {
        var header = decoded.batch
        header.events = []
        self.init(
            header: header, table: EventTable(decoded.batch.events), dropped: decoded.dropped,
            droppedIndices: decoded.droppedIndices)
    }

    /// The same batch as ``CodableBatchDecoder`` would decode it.
    public var decoded: DecodedBatch {
        var batch = header
        batch.events = table.diagnosticEvents
        return DecodedBatch(batch: batch, dropped: dropped, droppedIndices: droppedIndices)
    }
}
