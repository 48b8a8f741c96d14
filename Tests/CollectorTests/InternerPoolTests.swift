import FlowmeterModels
import FlowmeterWire
import TestSupport
import Testing

@testable import Collector

/// The ingest threads' interners: lent one per decode, kept between decodes, bounded in number.
@Suite struct InternerPoolTests {
    /// Two decodes through the pool, one after the other, share the strings the second repeats.
    @Test func anInternerGoesBackToThePoolAndIsLentAgain() throws {
        let pool = InternerPool(capacity: 2)
        let body = SyntheticBatches.batch(seed: 11)
        let first = try pool.withInterner { interner throws(BatchDecodingError) in
            try FastBatchDecoder.decode(body, interner: &interner)
        }
        let second = try pool.withInterner { interner throws(BatchDecodingError) in
            try FastBatchDecoder.decode(body, interner: &interner)
        }
        #expect(first.batch == second.batch)
        let paths = zip(first.batch.events, second.batch.events).compactMap { pair -> (String, String)? in
            guard let left = pair.0.codingPath, let right = pair.1.codingPath else { return nil }
            return (left, right)
        }
        let shared = paths.filter { storageAddress(of: $0.0) == storageAddress(of: $0.1) }.count
        #expect(shared * 10 >= paths.count * 8, "\(shared) of \(paths.count) coding paths shared")
    }

    /// Decodes running at once each get their own interner; no more than `capacity` are kept afterwards, and a
    /// failing decode gives its interner back too.
    @Test func concurrentDecodesEachGetTheirOwnAndThePoolStaysBounded() async throws {
        let pool = InternerPool(capacity: 2, slots: 64)
        let bodies = (0..<8).map { SyntheticBatches.batch(seed: UInt64($0)) }
        let counts = await withTaskGroup(of: Int.self) { group in
            for body in bodies {
                group.addTask {
                    (try? pool.withInterner { interner throws(BatchDecodingError) in
                        try FastBatchDecoder.decode(body, interner: &interner)
                    })?.batch.events.count ?? -1
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(counts.allSatisfy { $0 == 50 })
        let failure = pool.withInterner { interner in
            Result { () throws(BatchDecodingError) in try FastBatchDecoder.decode(Array("{".utf8), interner: &interner)
            }
        }
        #expect(throws: BatchDecodingError.self) { try failure.get() }
        #expect(pool.keptCount <= 2)
    }
}
