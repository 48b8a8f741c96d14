import Testing

@testable import FlowmeterModels
@testable import FlowmeterWire

/// Decoding into a caller's array (`storage`, the collector's kept arrays): the result is a fresh decode's,
/// whatever the array held, and an array someone else still holds is never written to.
@Suite struct DecodeEventStorageTests {
    private static let client = #"{"client":{"appID":"a","appVersion":"1","platform":"ios"},"#

    /// A full array of another batch's events: emptied, refilled in place, equal to a fresh decode.
    @Test func aStaleArrayIsEmptiedAndRefilledInPlace() throws {
        var interner = StringInterner()
        for seed in 0..<12 {
            var interner60 = StringInterner()
            let storage = try FastBatchDecoder.decodeCompact(
                SyntheticBatches.batch(seed: UInt64(seed + 100), events: 60), interner: &interner60
            ).table.storage
            let address = storage.eventsAddress
            let body = SyntheticBatches.batch(seed: UInt64(seed), events: seed % 3 == 0 ? 5 : 50)
            let reused = try FastBatchDecoder.decodeCompact(body, interner: &interner, storage: consume storage)
            let fresh = try FastBatchDecoder.decode(body)
            #expect(reused.decoded == fresh, "seed \(seed)")
            // `storage` was moved into the decode, so the refill happened in its memory.
            #expect(reused.table.storage.eventsAddress == address, "seed \(seed)")
        }
    }

    /// The caller keeps a reference to the array it passes: its events stay as they were.
    @Test func anArrayStillHeldElsewhereIsLeftAlone() throws {
        var interner = StringInterner()
        let heldTable = try FastBatchDecoder.decodeCompact(SyntheticBatches.batch(seed: 7), interner: &interner).table
        let before = heldTable.diagnosticEvents
        let body = SyntheticBatches.batch(seed: 8)
        let decoded = try FastBatchDecoder.decodeCompact(body, interner: &interner, storage: heldTable.storage)
        #expect(heldTable.diagnosticEvents == before)
        #expect(decoded.decoded == (try FastBatchDecoder.decode(body)))
    }

    /// Dropped events, rejected batches and oversized ones decode as they do fresh; a rejected batch only costs the
    /// array.
    @Test func droppedAndRejectedBatchesDecodeAsTheyDoFresh() throws {
        var staleInterner = StringInterner()
        let stale = try FastBatchDecoder.decodeCompact(SyntheticBatches.batch(seed: 5), interner: &staleInterner)
            .table.storage
        let bodies: [[UInt8]] = [
            Array(
                (Self.client + #""events":[{"kind":1},{"kind":"unknownType","occurredAt":"2026-12-01T00:00:00Z"}]}"#)
                    .utf8),
            Array((Self.client + #""events":{}}"#).utf8),
            Array("{".utf8),
            SyntheticBatches.batch(seed: 6),
        ]
        for (position, body) in bodies.enumerated() {
            var interner = StringInterner()
            let reused = Result { () throws(BatchDecodingError) in
                try FastBatchDecoder.decodeCompact(body, maxEvents: 40, interner: &interner, storage: stale)
                    .decoded
            }
            let fresh = Result { () throws(BatchDecodingError) in try FastBatchDecoder.decode(body, maxEvents: 40) }
            #expect(reused == fresh, "body \(position)")
        }
    }
}
