import FlowmeterModels
import Testing

@testable import Collector

/// The event arrays of finished batches, kept for later decodes: emptied with their capacity, bounded, and never
/// shared with a batch that still holds one.
@Suite struct EventStoragePoolTests {
    private static func events(_ count: Int, seed: UInt64) throws -> [DiagnosticEvent] {
        let events = try FastBatchDecoder.decode(SyntheticBatches.batch(seed: seed)).batch.events
        return Array(events.prefix(count))
    }

    private static func baseAddress(_ events: [DiagnosticEvent]) -> UnsafeRawPointer? {
        events.withUnsafeBufferPointer { $0.baseAddress.map(UnsafeRawPointer.init) }
    }

    /// A recycled array comes back empty, in the same storage, and the next decode fills that storage.
    @Test func aRecycledArrayIsTakenBackEmptyWithItsStorage() throws {
        let pool = EventStoragePool()
        var events = try Self.events(40, seed: 3)
        events.reserveCapacity(64)
        let address = Self.baseAddress(events)
        pool.recycle(events)
        events = []
        #expect(pool.keptCount == 1)
        let taken = pool.take()
        #expect(taken.isEmpty)
        #expect(taken.capacity >= 64)
        #expect(Self.baseAddress(taken) == address)
        #expect(pool.keptCount == 0)

        let body = SyntheticBatches.batch(seed: 9)
        var interner = StringInterner()
        let decoded = try FastBatchDecoder.decode(body, interner: &interner, eventStorage: consume taken)
        #expect(decoded.batch == (try FastBatchDecoder.decode(body)).batch)
        #expect(Self.baseAddress(decoded.batch.events) == address)
    }

    /// An array a batch still holds is taken back as a new empty one: the batch's events stay as they were.
    @Test func anArrayStillHeldElsewhereIsNeverEmptiedUnderItsHolder() throws {
        let pool = EventStoragePool()
        let held = try Self.events(50, seed: 4)
        let before = held
        pool.recycle(held)
        let taken = pool.take()
        #expect(taken.isEmpty)
        #expect(Self.baseAddress(taken) != Self.baseAddress(held))
        #expect(held == before)
        #expect(held.count == 50)
    }

    /// At most `maxKept` arrays, none larger than `maxCapacity` events, and no empty ones.
    @Test func thePoolKeepsABoundedNumberOfBoundedArrays() throws {
        let pool = EventStoragePool(maxKept: 3, maxCapacity: 128)
        for seed in 0..<6 {
            var events = try Self.events(10, seed: UInt64(seed))
            events.reserveCapacity(64)
            pool.recycle(events)
        }
        #expect(pool.keptCount == 3)
        var large: [DiagnosticEvent] = []
        large.reserveCapacity(1_000)
        _ = pool.take()
        pool.recycle(large)
        pool.recycle([])
        #expect(pool.keptCount == 2)
        for _ in 0..<5 { _ = pool.take() }
        #expect(pool.keptCount == 0)
        #expect(pool.take().isEmpty)
        // What the docs' bound assumes: 64 arrays of 256 events of at most 160 bytes are 2.5 MiB.
        #expect(MemoryLayout<DiagnosticEvent>.stride <= 160)
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
                            let decoded = try? FastBatchDecoder.decode(
                                bodies[index], interner: &interner, eventStorage: pool.take())
                        else { return false }
                        guard decoded.batch == expected[index] else { return false }
                        pool.recycle(decoded.batch.events)
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
