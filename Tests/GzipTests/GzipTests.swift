import Foundation
import Gzip
import TestSupport
import Testing

/// Serialized: the bomb test measures the process's peak RSS, which parallel round trips would inflate.
@Suite(.serialized) struct GzipTests {
    @Test(arguments: [0, 1, 100, 65_535, 65_536, 65_537, 1 << 20, 10_000_000])
    func gzipRoundTripsEverySize(count: Int) throws {
        let original = Self.sampleBytes(count: count)
        let compressed = Gzip.compress(original)
        #expect(compressed.starts(with: [0x1F, 0x8B]))
        let inflated = try Gzip.inflate(compressed, maxOutputBytes: 16 << 20)
        #expect(inflated == original)
    }

    @Test(arguments: [Gzip.Format.gzip, .deflate, .rawDeflate], [0, 9])
    func everyFormatAndLevelRoundTrips(format: Gzip.Format, level: Int) throws {
        let original = Self.sampleBytes(count: 300_000)
        let compressed = Gzip.compress(original, level: level, format: format)
        #expect(try Gzip.inflate(compressed, format: format) == original)
    }

    @Test func deflateAcceptsBothZlibAndRawStreams() throws {
        let original = Self.sampleBytes(count: 50_000)
        let zlib = Gzip.compress(original, format: .deflate)
        let raw = Gzip.compress(original, format: .rawDeflate)
        #expect(try Gzip.inflate(zlib, format: .deflate) == original)
        #expect(try Gzip.inflate(raw, format: .deflate) == original)
        // A zlib stream is not raw deflate: the header bytes are not a valid block.
        #expect(throws: GzipError.self) { _ = try Gzip.inflate(zlib, format: .rawDeflate) }
        // Gzip framing is not accepted where deflate was declared.
        #expect(throws: GzipError.self) { _ = try Gzip.inflate(Gzip.compress(original), format: .deflate) }
    }

    @Test func outputExactlyAtTheCapIsAcceptedAndOneByteMoreIsNot() throws {
        let original = Self.sampleBytes(count: 200_000)
        let compressed = Gzip.compress(original)
        #expect(try Gzip.inflate(compressed, maxOutputBytes: 200_000) == original)
        let error = #expect(throws: GzipError.self) { _ = try Gzip.inflate(compressed, maxOutputBytes: 199_999) }
        #expect(error?.code == .tooLarge)
        #expect(error?.isRetriable == false)
    }

    @Test(arguments: [Gzip.Format.gzip, .deflate])
    func bombStopsAtTheCapWithBoundedMemory(format: Gzip.Format) throws {
        // 1 GiB of zeros, compressed by streaming so the test never holds the gigabyte.
        let compressor = GzipCompressor(format: format, level: 9)
        let zeros = [UInt8](repeating: 0, count: 1 << 20)
        var bomb: [UInt8] = []
        for _ in 0..<1024 { compressor.write(zeros, into: &bomb) }
        compressor.finish(into: &bomb)
        #expect(bomb.count < 1_100_000, "deflate's best ratio is about 1032:1")

        let peakBefore = try Self.resetPeakResidentBytes()
        let error = #expect(throws: GzipError.self) {
            _ = try Gzip.inflate(bomb, format: format, maxOutputBytes: 5 << 20)
        }
        let peakGrowth = try Self.peakResidentBytes() - peakBefore
        #expect(error?.code == .tooLarge)
        #expect(peakGrowth < 10 << 20, "peak RSS grew by \(peakGrowth) bytes")
    }

    @Test func concatenatedGzipMembersInflateToTheirConcatenation() throws {
        let first = Self.sampleBytes(count: 70_000)
        let second = Array("second member".utf8)
        let body = Gzip.compress(first) + Gzip.compress(second) + Gzip.compress([])
        #expect(try Gzip.inflate(body) == first + second)
        // The cap counts all members together.
        let error = #expect(throws: GzipError.self) { _ = try Gzip.inflate(body, maxOutputBytes: 70_005) }
        #expect(error?.code == .tooLarge)
    }

    @Test(arguments: [[UInt8](arrayLiteral: 0), [0, 0, 0, 0], Array("garbage".utf8), [0x1F]])
    func trailingBytesAfterTheStreamAreCorrupt(trailer: [UInt8]) {
        for format in [Gzip.Format.gzip, .deflate, .rawDeflate] {
            let body = Gzip.compress(Array("hello".utf8), format: format) + trailer
            let error = #expect(throws: GzipError.self) { _ = try Gzip.inflate(body, format: format) }
            #expect(error?.code == .corrupt)
        }
    }

    @Test(arguments: [Gzip.Format.gzip, .deflate, .rawDeflate])
    func everyTruncationIsCorrupt(format: Gzip.Format) {
        let body = Gzip.compress(Self.sampleBytes(count: 5_000), format: format)
        for length in 0..<body.count {
            let error = #expect(throws: GzipError.self) { _ = try Gzip.inflate(Array(body[..<length]), format: format) }
            #expect(error?.code == .corrupt, "prefix of \(length) bytes")
        }
    }

    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8])
    func aFlippedByteInTheTrailerIsCorrupt(distanceFromEnd: Int) {
        // The gzip trailer is CRC-32 (bytes -8...-5) then the length mod 2^32 (bytes -4...-1).
        var body = Gzip.compress(Self.sampleBytes(count: 10_000))
        body[body.count - distanceFromEnd] ^= 0x01
        let error = #expect(throws: GzipError.self) { _ = try Gzip.inflate(body) }
        #expect(error?.code == .corrupt)
    }

    @Test func aFlippedByteInTheZlibChecksumIsCorrupt() {
        var body = Gzip.compress(Self.sampleBytes(count: 10_000), format: .deflate)
        body[body.count - 1] ^= 0x80
        let error = #expect(throws: GzipError.self) { _ = try Gzip.inflate(body, format: .deflate) }
        #expect(error?.code == .corrupt)
    }

    @Test func randomGarbageNeverInflates() {
        var generator = SeededGenerator(seed: 42)
        for round in 0..<500 {
            let count = Int.random(in: 1...4_096, using: &generator)
            var garbage = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if round.isMultiple(of: 2) { garbage[0] = 0x1F }
            if round.isMultiple(of: 2) && count > 1 { garbage[1] = 0x8B }
            for format in [Gzip.Format.gzip, .deflate] {
                // Random bytes can, rarely, be a valid raw deflate stream; the point is no crash and no overrun.
                do {
                    let output = try Gzip.inflate(garbage, format: format, maxOutputBytes: 1 << 20)
                    #expect(format == .deflate && output.count <= 1 << 20)
                } catch {
                    #expect(error.code == .corrupt || error.code == .tooLarge)
                }
            }
        }
    }

    @Test func anEmptyBodyIsCorrupt() {
        for format in [Gzip.Format.gzip, .deflate, .rawDeflate] {
            let error = #expect(throws: GzipError.self) { _ = try Gzip.inflate([], format: format) }
            #expect(error?.code == .corrupt)
        }
    }

    @Test func contentEncodingNamesMapToFormats() {
        #expect(Gzip.Format(contentEncoding: "gzip") == .gzip)
        #expect(Gzip.Format(contentEncoding: " X-GZIP ") == .gzip)
        #expect(Gzip.Format(contentEncoding: "deflate") == .deflate)
        #expect(Gzip.Format(contentEncoding: "identity") == nil)
        #expect(Gzip.Format(contentEncoding: "br") == nil)
    }

    @Test func compressorOutputMatchesOneShotInflation() throws {
        let original = Self.sampleBytes(count: 500_000)
        let compressor = GzipCompressor()
        var output: [UInt8] = []
        var start = 0
        while start < original.count {
            let end = min(start + 7_777, original.count)
            compressor.write(Array(original[start..<end]), into: &output)
            start = end
        }
        compressor.finish(into: &output)
        #expect(try Gzip.inflate(output) == original)
    }

    // MARK: - Helpers

    /// Compressible but not trivial bytes, like JSON: words from a small vocabulary plus some noise.
    static func sampleBytes(count: Int) -> [UInt8] {
        var generator = SeededGenerator(seed: UInt64(count))
        let words = ["widgetType", "unknownType", "\"count\":", "hologram", "{", "}", ",", "2026-11-30T08:59:58Z"]
            .map { Array($0.utf8) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count + 32)
        while bytes.count < count {
            if UInt8.random(in: 0...9, using: &generator) == 0 {
                bytes.append(UInt8.random(in: 0...255, using: &generator))
            } else {
                bytes += words[Int.random(in: 0..<words.count, using: &generator)]
            }
        }
        return Array(bytes.prefix(count))
    }

    /// Resets the kernel's peak-RSS mark to the current RSS and returns it (Linux `clear_refs` value 5).
    static func resetPeakResidentBytes() throws -> Int {
        try Data("5".utf8).write(to: URL(fileURLWithPath: "/proc/self/clear_refs"))
        return try peakResidentBytes()
    }

    static func peakResidentBytes() throws -> Int {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") })
        let kilobytes = try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
        return kilobytes * 1024
    }
}
