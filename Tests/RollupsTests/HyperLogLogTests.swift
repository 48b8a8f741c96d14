import Foundation
import TestSupport
import Testing

@testable import Rollups

@Suite struct HyperLogLogTests {
    @Test(arguments: [100, 1_000, 5_000, 10_000, 20_000, 50_000, 100_000, 1_000_000])
    func estimateIsWithinThreeStandardErrors(distinct: Int) {
        var random = SeededGenerator(seed: UInt64(distinct) &* 7919)
        var sketch = HyperLogLog()
        for _ in 0..<distinct { sketch.insert(hash: random.next()) }
        let error = abs(sketch.estimate - Double(distinct)) / Double(distinct)
        #expect(error <= 3 * HyperLogLog.standardError, "estimate \(sketch.estimate) for \(distinct)")
    }

    @Test(arguments: [100, 2_000, 20_000])
    func installHashesEstimateWithinBound(distinct: Int) {
        var random = SeededGenerator(seed: 42 &+ UInt64(distinct))
        var sketch = HyperLogLog()
        for _ in 0..<distinct {
            let hash = random.installHash()
            // Each install sends many batches: repeats must not count.
            sketch.insert(installHash: hash)
            sketch.insert(installHash: hash)
        }
        let error = abs(sketch.estimate - Double(distinct)) / Double(distinct)
        #expect(error <= 3 * HyperLogLog.standardError, "estimate \(sketch.estimate) for \(distinct)")
    }

    @Test func installHashUsesItsFirstSixteenHexDigits() {
        #expect(HyperLogLog.hash(installHash: "0123456789abcdefffffffffffffffff") == 0x0123_4567_89ab_cdef)
        #expect(HyperLogLog.hash(installHash: "0123456789ABCDEF") == 0x0123_4567_89ab_cdef)
        // Not hex: hashed as a string, deterministically and differently from a neighbour.
        let odd = HyperLogLog.hash(installHash: "not-a-pseudonym")
        #expect(odd == HyperLogLog.hash(string: "not-a-pseudonym"))
        #expect(odd != HyperLogLog.hash(installHash: "not-a-pseudonyn"))
    }

    @Test func emptyAndSmallSketchesCountExactlyEnough() {
        var sketch = HyperLogLog()
        #expect(sketch.isEmpty)
        #expect(sketch.estimate == 0)
        sketch.insert(installHash: "00000000000000010000000000000000")
        #expect(sketch.count == 1)
        sketch.insert(installHash: "00000000000000010000000000000000")
        #expect(sketch.count == 1)
    }

    @Test func turnsDenseAboveTheSparseLimit() {
        var random = SeededGenerator(seed: 9)
        var sketch = HyperLogLog()
        for _ in 0..<200 { sketch.insert(hash: random.next()) }
        #expect(!sketch.isDense)
        for _ in 0..<2_000 { sketch.insert(hash: random.next()) }
        #expect(sketch.isDense)
    }

    @Test(arguments: [(40, 60), (300, 400), (5_000, 5_000), (100, 80_000)])
    func mergeIsTheSketchOfTheUnion(sizes: (Int, Int)) {
        var random = SeededGenerator(seed: UInt64(sizes.0 * 31 + sizes.1))
        let shared = (0..<(min(sizes.0, sizes.1) / 2)).map { _ in random.next() }
        let onlyA = (0..<sizes.0).map { _ in random.next() }
        let onlyB = (0..<sizes.1).map { _ in random.next() }
        var a = HyperLogLog()
        var b = HyperLogLog()
        var union = HyperLogLog()
        for hash in shared + onlyA { a.insert(hash: hash) }
        for hash in shared + onlyB { b.insert(hash: hash) }
        for hash in shared + onlyA + onlyB { union.insert(hash: hash) }
        #expect(a.merging(b) == union)
        #expect(b.merging(a) == union)
        let distinct = Double(shared.count + onlyA.count + onlyB.count)
        #expect(abs(a.merging(b).estimate - distinct) / distinct <= 3 * HyperLogLog.standardError)
    }

    @Test(arguments: [10, 3_000])
    func mergeIsIdempotent(size: Int) {
        var random = SeededGenerator(seed: UInt64(size))
        var sketch = HyperLogLog()
        for _ in 0..<size { sketch.insert(hash: random.next()) }
        #expect(sketch.merging(sketch) == sketch)
        #expect(sketch.merging(HyperLogLog()) == sketch)
        #expect(HyperLogLog().merging(sketch) == sketch)
    }

    @Test(arguments: [0, 1, 50, 512, 513, 3_000, 200_000])
    func serializationRoundTrips(size: Int) throws {
        var random = SeededGenerator(seed: UInt64(size) &+ 5)
        var sketch = HyperLogLog()
        for _ in 0..<size { sketch.insert(hash: random.next()) }
        let bytes = sketch.serialized()
        #expect(bytes[0] == HyperLogLog.serializationVersion)
        #expect(bytes[1] == (sketch.isDense ? 1 : 0))
        let decoded = try HyperLogLog(serialized: bytes)
        #expect(decoded == sketch)
        #expect(decoded.estimate == sketch.estimate)
    }

    @Test func denseBytesWithFewRegistersDecodeToTheEqualSparseSketch() throws {
        var sketch = HyperLogLog()
        sketch.insert(hash: 0x0010_0000_0000_0001)
        var dense: [UInt8] = [1, 1, 12] + [UInt8](repeating: 0, count: 4096)
        dense[3 + 1] = sketch.registers[1]
        #expect(try HyperLogLog(serialized: dense) == sketch)
    }

    @Test(arguments: [
        [UInt8](), [1], [2, 0, 12, 0, 0], [1, 0, 14, 0, 0], [1, 7, 12], [1, 0, 12, 0, 1], [1, 0, 12, 0, 1, 0, 1, 60],
        [1, 0, 12, 0, 2, 0, 5, 1, 0, 5, 1], [1, 0, 12, 0, 1, 16, 0, 1], [1, 1, 12, 0, 0], [1, 0, 12, 0, 1, 0, 1, 0],
    ])
    func corruptBytesThrow(bytes: [UInt8]) {
        #expect(throws: RollupsError.self) { try HyperLogLog(serialized: bytes) }
    }

    @Test func randomBytesNeverTrap() {
        var random = SeededGenerator(seed: 77)
        for length in 0..<300 {
            var bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            if length > 2 {
                bytes[0] = 1
                bytes[2] = 12
                bytes[1] = UInt8(truncatingIfNeeded: random.next() & 1)
            }
            _ = try? HyperLogLog(serialized: bytes)
        }
    }
}
