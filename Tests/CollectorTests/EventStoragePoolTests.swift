import FlowmeterModels
import FlowmeterWire
import Testing

@testable import Collector

/// The event tables' arrays of finished batches and the writers' escaped tables, kept for later batches: emptied
/// with their capacity, bounded, and never shared with a batch that still holds one.
@Suite struct EventStoragePoolTests {
    /// A finished batch's table storage, as a decode leaves it.
    private static func storage(events: Int, seed: UInt64) throws -> EventTableStorage {
        var interner = StringInterner()
        return try FastBatchDecoder.decodeCompact(
            SyntheticBatches.batch(seed: seed, events: events), interner: &interner
        ).table.storage
    }

    /// Recycled arrays come back empty, in the same memory, and the next decode fills that memory.
    @Test func aRecycledStorageIsTakenBackEmptyWithItsMemory() throws {
        let pool = EventStoragePool()
        // A full 50-event batch: its strings array (about 170 entries) is kept too.
        var storage = try Self.storage(events: 50, seed: 3)
        let address = storage.eventsAddress
        let capacity = storage.eventCapacity
        pool.recycle(storage)
        storage = EventTableStorage()
        #expect(pool.keptCount == 1)
        let taken = pool.take()
        #expect(taken.isEmpty)
        #expect(taken.eventCapacity == capacity)
        #expect(taken.stringCapacity > 0)
        #expect(taken.eventsAddress == address)
        #expect(pool.keptCount == 0)

        let body = SyntheticBatches.batch(seed: 9, events: 50)
        var interner = StringInterner()
        let decoded = try FastBatchDecoder.decodeCompact(body, interner: &interner, storage: consume taken)
        #expect(decoded.decoded.batch == (try FastBatchDecoder.decode(body)).batch)
        #expect(decoded.table.storage.eventsAddress == address)
    }

    /// Arrays a batch still holds are taken back as new empty ones: the batch's events stay as they were.
    @Test func aStorageStillHeldElsewhereIsNeverEmptiedUnderItsHolder() throws {
        let pool = EventStoragePool()
        var interner = StringInterner()
        let held = try FastBatchDecoder.decodeCompact(SyntheticBatches.batch(seed: 4), interner: &interner).table
        let before = held.diagnosticEvents
        pool.recycle(held.storage)
        let taken = pool.take()
        #expect(taken.isEmpty)
        #expect(taken.eventsAddress != held.storage.eventsAddress)
        #expect(held.diagnosticEvents == before)
        #expect(held.count == 50)
    }

    /// At most `maxKept` storages, none with more than `maxCapacity` events or eight times as many entries, and no
    /// empty ones.
    @Test func thePoolKeepsABoundedNumberOfBoundedStorages() throws {
        let pool = EventStoragePool(maxKept: 3, maxCapacity: 128)
        for seed in 0..<6 {
            pool.recycle(try Self.storage(events: 10, seed: UInt64(seed)))
        }
        #expect(pool.keptCount == 3)
        _ = pool.take()
        pool.recycle(try Self.storage(events: 300, seed: 1))
        pool.recycle(EventTableStorage())
        #expect(pool.keptCount == 2)
        for _ in 0..<5 { _ = pool.take() }
        #expect(pool.keptCount == 0)
        #expect(pool.take().isEmpty)
        // What the docs' bound assumes: 64 arrays of 256 events of under 64 bytes are under 1 MiB.
        #expect(MemoryLayout<CompactEvent>.stride < 64)
    }

    /// Escaped tables come back as the same object, at most `maxKept` of them and none past `maxScratchBytes`; a
    /// writer on a reused one writes what a writer on a new one does.
    @Test func escapedTablesAreKeptBoundedAndWriteAlike() throws {
        let pool = EventStoragePool(maxKept: 2, maxScratchBytes: 64 << 10)
        let first = pool.takeScratch()
        var interner = StringInterner()
        let tables = try (0..<3 as Range<UInt64>).map { seed in
            try FastBatchDecoder.decodeCompact(SyntheticBatches.batch(seed: seed), interner: &interner)
        }
        let shared = EventRecordBatch(
            batchID: "b", client: tables[0].header.client, installHash: nil,
            receivedAt: Timestamp(secondsSinceEpoch: 1_796_029_200), collector: "c")
        func records(_ batch: CompactBatch, scratch: EscapedTable) -> [[UInt8]] {
            let writer = CompactRecordWriter(
                table: batch.table, shared: shared, keyPrefix: .init(appID: "a"), scratch: scratch)
            return batch.table.events.enumerated().map { index, event in
                [UInt8](unsafeUninitializedCapacity: writer.maxLength(of: event)) { memory, count in
                    count = writer.write(event: event, index: index, into: UnsafeMutableRawBufferPointer(memory))
                }
            }
        }
        for batch in tables {
            let written = records(batch, scratch: first)
            pool.recycle(first)
            #expect(pool.takeScratch() === first)
            #expect(written == records(batch, scratch: EscapedTable()))
        }
        pool.recycle(first)
        pool.recycle(EscapedTable())
        pool.recycle(EscapedTable())
        #expect(pool.keptScratchCount == 2)
        let large = EscapedTable()
        _ = CompactRecordWriter(
            table: EventTable([
                DiagnosticEvent(
                    kind: .unknownType, codingPath: String(repeating: "x", count: 70_000),
                    occurredAt: Timestamp(secondsSinceEpoch: 1_796_029_200))
            ]), shared: shared, keyPrefix: .init(appID: "a"),
            scratch: large)
        #expect(large.capacity > 64 << 10)
        _ = pool.takeScratch()
        pool.recycle(large)
        #expect(pool.keptScratchCount == 1)
    }

    /// Decodes and recycles from several tasks at once: every decode gives the fresh decode's result.
    @Test func concurrentDecodesThroughThePoolGiveFreshResults() async throws {
        let pool = EventStoragePool(maxKept: 4)
        let bodies = (0..<6).map { SyntheticBatches.batch(seed: UInt64($0)) }
        let expected = try bodies.map { try FastBatchDecoder.decode($0).batch }
        let matches = await withTaskGroup(of: Bool.self) { group in
            for task in 0..<8 {
                group.addTask {
                    var interner = StringInterner(slots: 64)
                    for round in 0..<30 {
                        let index = (task + round) % bodies.count
                        guard
                            let decoded = try? FastBatchDecoder.decodeCompact(
                                bodies[index], interner: &interner, storage: pool.take())
                        else { return false }
                        guard decoded.decoded.batch == expected[index] else { return false }
                        pool.recycle(decoded.table.storage)
                    }
                    return true
                }
            }
            return await group.reduce(true) { $0 && $1 }
        }
        #expect(matches)
        #expect(pool.keptCount <= 4)
    }
}
