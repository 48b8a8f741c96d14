import Testing

@testable import Collector

/// The record blocks' pool: sizes, reuse, and its bound.
@Suite struct BlockPoolTests {
    @Test func sizesRoundUpToPowersOfTwoWithinThePooledRange() {
        #expect(BlockPool.roundedSize(0) == 16 << 10)
        #expect(BlockPool.roundedSize(16 << 10) == 16 << 10)
        #expect(BlockPool.roundedSize((16 << 10) + 1) == 32 << 10)
        #expect(BlockPool.roundedSize(50_000) == 64 << 10)
        #expect(BlockPool.roundedSize(256 << 10) == 256 << 10)
        #expect(BlockPool.roundedSize((256 << 10) + 1) == (256 << 10) + 1, "past the largest: as asked")
    }

    @Test func aGivenBufferIsTakenAgainAndThePoolKeepsAtMostItsBound() {
        let pool = BlockPool()
        let first = pool.take(size: 32 << 10)
        pool.give(first, size: 32 << 10)
        #expect(pool.count == 1)
        #expect(pool.take(size: 32 << 10) == first, "the same memory comes back")
        #expect(pool.count == 0)
        // 4 MiB of each size: 64 blocks of 64 KiB (32 connections' batches in flight fit), 16 of 256 KiB.
        #expect(BlockPool.maxKept(ofSize: 64 << 10) == 64)
        #expect(BlockPool.maxKept(ofSize: 256 << 10) == 16)
        let many = (0..<(64 + 4)).map { _ in pool.take(size: 64 << 10) }
        for buffer in many { pool.give(buffer, size: 64 << 10) }
        #expect(pool.count == 64)
        let largest = (0..<(16 + 2)).map { _ in pool.take(size: 256 << 10) }
        for buffer in largest { pool.give(buffer, size: 256 << 10) }
        #expect(pool.count == 64 + 16)
        let large = pool.take(size: 1 << 20)
        pool.give(large, size: 1 << 20)
        #expect(pool.count == 64 + 16, "blocks past the largest size are freed, not kept")
        pool.give(first, size: 32 << 10)
    }

    @Test func aBlockGrowsKeepingItsBytesAndASharedOneIsCopiedBeforeAWrite() {
        var batch = SpoolBatch(topic: "t", headers: [])
        let value = Array(repeating: UInt8(ascii: "v"), count: 20_000)
        for _ in 0..<3 {
            value.withUnsafeBytes { batch.append(key: nil, value: $0) }
        }
        #expect(batch.count == 3)
        #expect(Array(batch.value(2)) == value, "the block grew past 16 KiB and kept every record")
        let shared = batch.block
        batch.sealChecksums()
        #expect(batch.block !== shared, "a block someone else holds is copied, never written")
        #expect(Array(batch.value(0)) == value)
    }
}
