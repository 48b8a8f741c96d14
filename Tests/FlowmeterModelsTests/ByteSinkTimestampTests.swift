import Testing

@testable import FlowmeterModels
@testable import FlowmeterWire

/// ByteSink writes a time byte for byte as `Timestamp.appendRFC3339` does, quoted: every digit position, every
/// fraction length, the ends of the four-digit years.
@Suite struct ByteSinkTimestampTests {
    static func quoted(_ time: Timestamp) -> String {
        var memory = [UInt8](repeating: 0, count: ByteSink.maxQuotedTimestampLength)
        let length = memory.withUnsafeMutableBufferPointer { buffer in
            var sink = ByteSink(buffer.baseAddress!)
            sink.quotedTimestamp(time)
            return sink.position
        }
        return String(decoding: memory[..<length], as: UTF8.self)
    }

    static func reference(_ time: Timestamp) -> String {
        var bytes: [UInt8] = []
        time.appendRFC3339(to: &bytes)
        return "\"" + String(decoding: bytes, as: UTF8.self) + "\""
    }

    @Test func everyFractionLengthAndTheEndsOfTheYearRange() {
        let seconds: [Int64] = [
            0, 59, 3_599, 86_399, 1_795_942_800, 951_782_400, -62_167_219_200, 253_402_300_799, 1_000_000_007,
        ]
        let nanoseconds: [Int32] = [0, 1, 10, 120, 5_000, 250_000_000, 999_999_999, 100_000_000, 123_456_789]
        for second in seconds {
            for nanosecond in nanoseconds {
                let time = Timestamp(secondsSinceEpoch: second, nanoseconds: nanosecond)
                #expect(Self.quoted(time) == Self.reference(time))
            }
        }
    }

    @Test func aSpreadOfInstants() {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<5_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let second = Int64(state >> 30) % 253_402_300_799
            let time = Timestamp(secondsSinceEpoch: second, nanoseconds: Int32(state & 0x3FFF_FFFF) % 1_000_000_000)
            #expect(Self.quoted(time) == Self.reference(time))
        }
    }

    /// Through one minute cache, as a batch's records are written: times in a cached minute, in the next one, 16
    /// minutes (the same slot), a day, a year and the ends of the years 0000-9999 apart, back and forth, each the
    /// reference's bytes.
    @Test func throughTheMinuteCache() {
        var cache = [ByteSink.MinutePrefix](repeating: .init(), count: ByteSink.MinutePrefix.cacheSlots)
        var memory = [UInt8](repeating: 0, count: ByteSink.maxQuotedTimestampLength)
        func quoted(_ time: Timestamp) -> String {
            let length = memory.withUnsafeMutableBufferPointer { buffer in
                cache.withUnsafeMutableBufferPointer { slots in
                    var sink = ByteSink(buffer.baseAddress!)
                    sink.quotedTimestamp(time, cache: slots.baseAddress!)
                    return sink.position
                }
            }
            return String(decoding: memory[..<length], as: UTF8.self)
        }
        let base: Int64 = 1_796_029_200
        var seconds: [Int64] = [base, base + 1, base + 59, base + 60, base - 1, base, base + 86_400, base + 31_536_000]
        seconds += [base + 16 * 60, base, base + 32 * 60 + 5, base + 16 * 60 + 1, base + 60]
        // The ends of the years 0000-9999, the range an RFC 3339 time the decoder accepts can spell.
        seconds += [-62_167_219_200, -62_167_219_140, -62_167_219_141, 253_402_300_799, 253_402_300_740, -1, 0, 59, 60]
        seconds += [base, base + 30, 253_402_300_740, 253_402_300_799, -62_167_219_200]
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        for _ in 0..<2_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            // Mostly near the base, as a batch's events are, sometimes anywhere in the years 0000-9999.
            let spread = state % 4 == 0 ? Int64(state >> 30) % 253_402_300_799 : base + Int64(state >> 40) % 180
            seconds.append(spread)
        }
        for (index, second) in seconds.enumerated() {
            let milliseconds = index % 7 == 0 ? 0 : index % 1_000
            let time = Timestamp(secondsSinceEpoch: second, nanoseconds: Int32(milliseconds * 1_000_000))
            #expect(quoted(time) == Self.reference(time), "\(second)")
        }
    }
}
