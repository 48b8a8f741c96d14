import Testing

@testable import FlowmeterModels

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
}
