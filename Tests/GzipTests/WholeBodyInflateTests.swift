import Gzip
import Testing

/// `Gzip.inflate` (libdeflate, the whole body at once) held to `Gzip.referenceInflate` (zlib's streaming inflate):
/// the same bytes or the same error code, on good bodies, every truncation and flipped byte, lying trailers and
/// gzip headers that carry their own CRC-16.
@Suite struct WholeBodyInflateTests {
    enum Outcome: Equatable {
        case inflated([UInt8])
        case failed(GzipError.Code)
    }

    static func outcome(_ body: [UInt8], _ format: Gzip.Format, cap: Int, reference: Bool) -> Outcome {
        do throws(GzipError) {
            if reference {
                let bytes = try body.withUnsafeBytes { buffer in
                    Result { () throws(GzipError) -> [UInt8] in
                        try Gzip.referenceInflate(buffer, format: format, maxOutputBytes: cap)
                    }
                }.get()
                return .inflated(bytes)
            }
            return .inflated(try Gzip.inflate(body, format: format, maxOutputBytes: cap))
        } catch {
            return .failed(error.code)
        }
    }

    /// Both inflaters' outcome, expected equal; returns it.
    @discardableResult
    static func agree(
        _ body: [UInt8], _ format: Gzip.Format, cap: Int = Gzip.defaultMaxOutputBytes,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> Outcome {
        let fast = outcome(body, format, cap: cap, reference: false)
        let reference = outcome(body, format, cap: cap, reference: true)
        #expect(fast == reference, "\(format), cap \(cap), \(body.count) bytes", sourceLocation: sourceLocation)
        return fast
    }

    @Test(arguments: [Gzip.Format.gzip, .deflate, .rawDeflate])
    func everyTruncationAndEveryFlippedByteGivesWhatZlibGives(format: Gzip.Format) {
        let content = GzipTests.sampleBytes(count: 3_000)
        let body = Gzip.compress(content, format: format)
        #expect(Self.agree(body, format) == .inflated(content))
        for length in 0..<body.count {
            Self.agree(Array(body[..<length]), format)
        }
        for position in body.indices {
            for bit in [0x01, 0x80] as [UInt8] {
                var flipped = body
                flipped[position] ^= bit
                Self.agree(flipped, format)
            }
        }
    }

    @Test(arguments: [0, 1, 2_999, 3_000, 3_001, 1 << 20])
    func theCapCutsWhereZlibCuts(cap: Int) {
        let content = GzipTests.sampleBytes(count: 3_000)
        for format in [Gzip.Format.gzip, .deflate, .rawDeflate] {
            Self.agree(Gzip.compress(content, format: format), format, cap: cap)
        }
    }

    @Test func membersLargerThanTheFirstGuessAreInflatedAgainIntoTheCap() throws {
        // The trailer names the last member's 5 bytes; the first member's 400 KB of zeros compress to a few
        // hundred bytes, so the first guess (8× the body, at least 64 KiB) is too small and the cap is used.
        let first = [UInt8](repeating: 0, count: 400_000)
        let second = Array("tail!".utf8)
        let body = Gzip.compress(first, level: 9) + Gzip.compress(second)
        #expect(body.count * 8 < 400_000)
        #expect(Self.agree(body, .gzip) == .inflated(first + second))
        #expect(Self.agree(body, .gzip, cap: 400_004) == .failed(.tooLarge))
        #expect(Self.agree(body, .gzip, cap: 400_005) == .inflated(first + second))
    }

    @Test(arguments: [UInt32(0), 1, 4_999, 5_001, 1 << 31, .max])
    func aTrailerLyingAboutTheLengthIsCorrupt(length: UInt32) {
        var body = Gzip.compress(GzipTests.sampleBytes(count: 5_000))
        let end = body.count
        withUnsafeBytes(of: length.littleEndian) { body.replaceSubrange(end - 4..<end, with: $0) }
        #expect(Self.agree(body, .gzip) == .failed(.corrupt))
    }

    /// A gzip member with `FHCRC` set: the CRC-16 of its header after the fixed ten bytes; libdeflate skips it, so
    /// such bodies go to zlib, which checks it.
    static func memberWithHeaderCRC(_ content: [UInt8], correct: Bool) -> [UInt8] {
        let plain = Gzip.compress(content)
        // compress writes no optional fields: ten header bytes, the deflate data, then the eight-byte trailer.
        var header = Array(plain[..<10])
        header[3] |= 0x02
        var crc16 = UInt16(truncatingIfNeeded: Gzip.crc32(header))
        if !correct { crc16 ^= 0x5A5A }
        return header + [UInt8(crc16 & 0xFF), UInt8(crc16 >> 8)] + plain[10...]
    }

    @Test func headersWithTheirOwnCRCAreCheckedAsZlibChecksThem() {
        let content = Array("a member with a header checksum".utf8)
        let good = Self.memberWithHeaderCRC(content, correct: true)
        let bad = Self.memberWithHeaderCRC(content, correct: false)
        #expect(Self.agree(good, .gzip) == .inflated(content))
        #expect(Self.agree(bad, .gzip) == .failed(.corrupt))
        // A later member with one: the whole body goes to zlib.
        let first = Gzip.compress(Array("first ".utf8))
        #expect(Self.agree(first + good, .gzip) == .inflated(Array("first ".utf8) + content))
        #expect(Self.agree(first + bad, .gzip) == .failed(.corrupt))
    }

    @Test func concatenationsTrailersAndPaddingAgree() {
        let one = Gzip.compress(Array("one".utf8))
        let empty = Gzip.compress([])
        for body in [one + empty + one, empty, one + [0x1F], one + [0x1F, 0x8B], one + [0, 0], one + one.prefix(12)] {
            Self.agree(body, .gzip)
        }
        #expect(Self.agree(one + empty + one, .gzip) == .inflated(Array("oneone".utf8)))
    }
}
