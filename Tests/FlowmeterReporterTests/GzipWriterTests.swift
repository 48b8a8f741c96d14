import FlowmeterModels
import FlowmeterWire
import Foundation
import Gzip
import Testing

@testable import FlowmeterReporter

/// The SDK's own gzip, checked against zlib's inflate (the collector's decoder).
@Suite struct GzipWriterTests {
    static func pseudoRandom(_ count: Int, seed: UInt64) -> [UInt8] {
        var state = seed
        return (0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 33)
        }
    }

    static var inputs: [(String, [UInt8])] {
        let batches = SyntheticBatches.batches(count: 20, seed: 9)
        return [
            ("empty", []),
            ("one byte", [42]),
            ("two bytes", [1, 2]),
            ("a run", [UInt8](repeating: 7, count: 100_000)),
            ("random", pseudoRandom(70_000, seed: 3)),
            ("text", Array(String(repeating: "the quick brown fox jumps over the lazy dog. ", count: 500).utf8)),
            ("json batches", batches.flatMap { $0 }),
            ("short alphabet", pseudoRandom(200_000, seed: 5).map { $0 % 4 }),
        ]
    }

    @Test(arguments: inputs.indices)
    func zlibInflatesWhatItWrites(index: Int) throws {
        let (name, input) = Self.inputs[index]
        let compressed = GzipWriter.compress(input)
        let inflated = try Gzip.inflate(compressed, maxOutputBytes: 1 << 26)
        #expect(inflated == input, "\(name)")
    }

    @Test func jsonBatchesShrinkAboutAsMuchAsWithZlib() throws {
        let json = SyntheticBatches.batches(count: 20, seed: 9).flatMap { $0 }
        let ours = GzipWriter.compress(json).count
        let zlib = Gzip.compress(json, level: 6).count
        #expect(ours < json.count / 4, "ours \(ours) of \(json.count)")
        #expect(Double(ours) < Double(zlib) * 1.4, "ours \(ours), zlib level 6 \(zlib)")
    }

    @Test func crcIsTheStandardOne() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(CRC32.checksum([]) == 0)
    }
}
