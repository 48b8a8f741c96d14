import FlowmeterModels

/// Writes the Kafka key and record of each ``CompactEvent`` of one batch, every string of the batch's table
/// escaped and quoted once.
///
/// A batch's events repeat their kinds, widget types, coding paths and messages: escaping each value once per table
/// entry and copying the escaped bytes per event replaces an escape per field per event (the collector's largest
/// own cost in writing records). The bytes are those of ``EventRecordBatch/write(event:index:into:)`` and
/// ``SeriesKey/AppPrefix`` for the same event as a `DiagnosticEvent`; the tests hold them to it.
// `@unchecked`: the raw pointers are into `table`'s memory, which the writer holds and only reads.
public struct CompactRecordWriter: @unchecked Sendable {
    private let shared: EventRecordBatch
    private let keyPrefix: [UInt8]
    /// Every table entry, escaped and quoted, one after the other, and where each ends.
    private let table: EscapedTable
    private let bytes: UnsafeRawPointer?
    private let ends: UnsafePointer<Int32>?
    /// The events' ids as UTF-8, escaped per record (each is one event's, so there is nothing to share).
    private let ids: [UInt8]
    /// The last minutes' quoted date prefixes, in the scratch table (see ``ByteSink/quotedTimestamp(_:cache:)``).
    private let minutes: UnsafeMutablePointer<ByteSink.MinutePrefix>
    /// Added to every `occurredAt` written (a batch record's skew correction); zero for none.
    private let shiftSeconds: Int64
    private let shiftNanoseconds: Int64

    /// Escapes the strings of `table`, whose events are to be written, into `scratch`, which the writer then uses:
    /// give each writer its own until it is done (the collector takes one from a pool per batch and gives it back
    /// after writing the batch's records); by default a new one.
    public init(
        table: EventTable, shared: EventRecordBatch, keyPrefix: SeriesKey.AppPrefix,
        scratch: EscapedTable = EscapedTable(), shift: Duration = .zero
    ) {
        let (seconds, attoseconds) = shift.components
        self.shiftSeconds = seconds
        self.shiftNanoseconds = attoseconds / 1_000_000_000
        self.shared = shared
        self.keyPrefix = keyPrefix.bytes
        self.ids = table.idBytes
        self.minutes = scratch.minutePrefix
        scratch.fill(table.strings)
        self.table = scratch
        // Read through plain pointers from here on: a class's stored `var`s are checked for exclusive access at
        // every read, which cost more than the copy they guard.
        self.bytes = scratch.bytes.map(UnsafeRawPointer.init)
        self.ends = scratch.ends.map { UnsafePointer($0) }
    }

    /// The escaped, quoted entry `index`'s length.
    @inline(__always)
    private func length(_ index: Int32) -> Int {
        let entry = Int(index)
        return Int(ends![entry]) - (entry == 0 ? 0 : Int(ends![entry - 1]))
    }

    @inline(__always)
    private func optionalLength(_ index: Int32) -> Int {
        index < 0 ? 0 : length(index)
    }

    @inline(__always)
    private func write(_ index: Int32, to sink: inout ByteSink) {
        let entry = Int(index)
        let start = entry == 0 ? 0 : Int(ends![entry - 1])
        sink.bytes(UnsafeRawBufferPointer(start: bytes! + start, count: Int(ends![entry]) - start))
    }

    @inline(__always)
    private func writeOptional(_ key: StaticString, _ index: Int32, to sink: inout ByteSink) {
        guard index >= 0 else { return }
        sink.key(key)
        write(index, to: &sink)
    }

    @inline(__always)
    private func shifted(_ time: Timestamp) -> Timestamp {
        guard shiftSeconds != 0 || shiftNanoseconds != 0 else { return time }
        var seconds = time.secondsSinceEpoch &+ shiftSeconds
        var nanoseconds = Int64(time.nanoseconds) + shiftNanoseconds
        if nanoseconds < 0 {
            nanoseconds += 1_000_000_000
            seconds &-= 1
        } else if nanoseconds >= 1_000_000_000 {
            nanoseconds -= 1_000_000_000
            seconds &+= 1
        }
        // Accepted events are within the maximum age and future skew after the shift: in range to spell.
        return Timestamp(secondsSinceEpoch: seconds, nanoseconds: Int32(nanoseconds))
    }

    /// The length of `event`'s key.
    public func keyLength(of event: CompactEvent) -> Int {
        keyPrefix.count + length(event.kind) + 2 + (event.widgetType < 0 ? 4 : length(event.widgetType))
    }

    /// Writes `event`'s key, `["<appID>","<kind>",<widget type or null>]`, into `memory` (at least
    /// ``keyLength(of:)`` bytes) and returns its length.
    public func writeKey(of event: CompactEvent, into memory: UnsafeMutableRawBufferPointer) -> Int {
        guard let base = memory.baseAddress else { return 0 }
        var sink = ByteSink(base.assumingMemoryBound(to: UInt8.self))
        keyPrefix.withUnsafeBytes { sink.bytes($0) }
        write(event.kind, to: &sink)
        sink.byte(UInt8(ascii: ","))
        if event.widgetType < 0 {
            sink.literal("null")
        } else {
            write(event.widgetType, to: &sink)
        }
        sink.byte(UInt8(ascii: "]"))
        precondition(sink.position <= memory.count, "CompactRecordWriter.writeKey: memory below keyLength")
        return sink.position
    }

    /// The most bytes `event`'s record can take.
    public func maxLength(of event: CompactEvent) -> Int {
        let id =
            event.id < 0
            ? shared.idPrefix.count + 2 + ByteSink.maxIntLength
            : ByteSink.maxQuotedLength(utf8Count: EventTable.idRange(at: event.id, in: ids).count)
        return id + shared.tail.count + EventRecordWriter.fixedEventFieldsLength + ByteSink.maxQuotedTimestampLength
            + ByteSink.maxIntLength + length(event.kind) + optionalLength(event.widgetType)
            + optionalLength(event.codingPath) + optionalLength(event.message) + optionalLength(event.pageID)
            + optionalLength(event.surface) + optionalLength(event.backendRelease)
    }

    /// Writes the record of `event`, at `index` in the batch as sent, into `memory` (at least ``maxLength(of:)``
    /// bytes) and returns its length.
    public func write(event: CompactEvent, index: Int, into memory: UnsafeMutableRawBufferPointer) -> Int {
        guard let base = memory.baseAddress else { return 0 }
        var sink = ByteSink(base.assumingMemoryBound(to: UInt8.self))
        sink.byte(UInt8(ascii: "{"))
        sink.key("id", first: true)
        if event.id >= 0 {
            let range = EventTable.idRange(at: event.id, in: ids)
            ids.withUnsafeBytes { sink.quoted(utf8: UnsafeRawBufferPointer(rebasing: $0[range])) }
        } else {
            sink.byte(UInt8(ascii: "\""))
            shared.idPrefix.withUnsafeBytes { sink.bytes($0) }
            sink.int(index)
            sink.byte(UInt8(ascii: "\""))
        }
        sink.key("kind")
        write(event.kind, to: &sink)
        writeOptional("widgetType", event.widgetType, to: &sink)
        writeOptional("codingPath", event.codingPath, to: &sink)
        writeOptional("message", event.message, to: &sink)
        writeOptional("pageID", event.pageID, to: &sink)
        writeOptional("surface", event.surface, to: &sink)
        writeOptional("backendRelease", event.backendRelease, to: &sink)
        sink.key("count")
        sink.int(event.count)
        sink.key("occurredAt")
        sink.quotedTimestamp(shifted(event.occurredAt), cache: minutes)
        shared.tail.withUnsafeBytes { sink.bytes($0) }
        precondition(sink.position <= memory.count, "CompactRecordWriter.write: memory below maxLength")
        return sink.position
    }
}

/// The memory a ``CompactRecordWriter`` escapes its batch's table into: one block for the escaped strings and one
/// for where each ends, both kept and reused by the next batch this is lent to.
///
/// Kept because a batch's escaped table is a few KiB: allocated per batch it took glibc's large-chunk path, which
/// consolidates the fast bins first (`malloc_consolidate`, measured under `make bench-instructions`). Not thread-safe:
/// one writer at a time (the `@unchecked Sendable` is for passing it between threads through a pool, never sharing).
public final class EscapedTable: @unchecked Sendable {
    private(set) var bytes: UnsafeMutableRawPointer?
    /// How many bytes the block of escaped strings holds.
    public private(set) var capacity = 0
    private(set) var ends: UnsafeMutablePointer<Int32>?
    private var endsCapacity = 0
    /// The quoted dates, hours and minutes last written by a writer using this table (``ByteSink/MinutePrefix``,
    /// 512 bytes): kept across batches, since an entry depends on its minute alone.
    let minutePrefix: UnsafeMutablePointer<ByteSink.MinutePrefix>

    public init() {
        minutePrefix = .allocate(capacity: ByteSink.MinutePrefix.cacheSlots)
        minutePrefix.initialize(repeating: ByteSink.MinutePrefix(), count: ByteSink.MinutePrefix.cacheSlots)
    }

    deinit {
        bytes?.deallocate()
        ends?.deallocate()
        minutePrefix.deallocate()
    }

    /// Escapes and quotes every string of `strings`, replacing what the table held.
    func fill(_ strings: [String]) {
        if strings.count > endsCapacity {
            ends?.deallocate()
            endsCapacity = max(strings.count, 2 * endsCapacity, 256)
            ends = UnsafeMutablePointer<Int32>.allocate(capacity: endsCapacity)
        }
        // One pass: room for an entry's bound is made before it is written, the block grown (what is written so far
        // copied) in the rare case it lacks it, so the block ends up a few times what one batch writes, not six.
        var position = 0
        for index in strings.indices {
            let bound = ByteSink.maxQuotedLength(strings[index])
            if position + bound > capacity { grow(to: position + bound, keeping: position) }
            var sink = ByteSink(bytes!.assumingMemoryBound(to: UInt8.self), position: position)
            sink.quoted(strings[index])
            position = sink.position
            precondition(position <= Int(Int32.max), "EscapedTable: a table past 2 GiB")
            ends![index] = Int32(truncatingIfNeeded: position)
        }
    }

    private func grow(to needed: Int, keeping written: Int) {
        let newCapacity = max(needed, 2 * capacity, 4_096)
        let block = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 16)
        if let bytes {
            block.copyMemory(from: bytes, byteCount: written)
            bytes.deallocate()
        }
        bytes = block
        capacity = newCapacity
    }
}
