import Foundation
import TestSupport
import Testing

@testable import FlowmeterModels

@Suite struct TimestampTests {
    @Test(arguments: [
        ("1970-01-01T00:00:00Z", Int64(0), Int32(0)),
        ("2026-11-30T08:59:58Z", 1_796_029_198, 0),
        ("2026-11-30T08:59:58.250Z", 1_796_029_198, 250_000_000),
        ("2026-11-30T10:59:58+02:00", 1_796_029_198, 0),
        ("2026-11-30T03:29:58-05:30", 1_796_029_198, 0),
        ("2026-11-30t08:59:58.123456789999z", 1_796_029_198, 123_456_789),
        ("2024-02-29T00:00:00Z", 1_709_164_800, 0),
        ("1969-12-31T23:59:59.5Z", -1, 500_000_000),
        ("0000-01-01T00:00:00Z", -62_167_219_200, 0),
    ])
    func parsesValidTimes(text: String, seconds: Int64, nanoseconds: Int32) throws {
        let time = try #require(Timestamp(rfc3339: text))
        #expect(time == Timestamp(secondsSinceEpoch: seconds, nanoseconds: nanoseconds))
    }

    @Test(arguments: [
        "2026-13-01T00:00:00Z", "2026-00-01T00:00:00Z", "2026-02-29T00:00:00Z", "2026-11-31T00:00:00Z",
        "2026-11-30T24:00:00Z", "2026-11-30T23:60:00Z", "2026-11-30T23:59:60Z", "2026-11-30 08:59:58Z",
        "2026-11-30T08:59:58", "2026-11-30T08:59:58.Z", "2026-11-30T08:59:58+0200", "2026-11-30T08:59:58+24:00",
        "2026-11-30T08:59:58Z ", "0000-01-01T00:00:00+00:01", "9999-12-31T23:59:59-00:01", "", "yesterday",
        "２026-11-30T08:59:58Z",
    ])
    func rejectsInvalidTimes(text: String) {
        #expect(Timestamp(rfc3339: text) == nil)
    }

    @Test func formatsUTCWithTheShortestFraction() {
        #expect(Timestamp(secondsSinceEpoch: 1_796_029_198).rfc3339String == "2026-11-30T08:59:58Z")
        #expect(
            Timestamp(secondsSinceEpoch: 1_796_029_198, nanoseconds: 250_000_000).rfc3339String
                == "2026-11-30T08:59:58.25Z")
        #expect(Timestamp(secondsSinceEpoch: -1, nanoseconds: 1).rfc3339String == "1969-12-31T23:59:59.000000001Z")
    }

    @Test func formattingRoundTripsEveryInstant() throws {
        var random = SeededGenerator(seed: 3)
        for _ in 0..<2000 {
            let seconds = Int64(random.next(below: 253_402_300_799 + 62_167_219_200)) - 62_167_219_200
            let time = Timestamp(secondsSinceEpoch: seconds, nanoseconds: Int32(random.next(below: 1_000_000_000)))
            #expect(Timestamp(rfc3339: time.rfc3339String) == time)
        }
    }

    /// Through one date cache, as the decoder parses a batch's times, every string parses as it does alone: the
    /// same date with other minutes, seconds, fractions and zones, a bad time or rest after a good date, a bad
    /// date twice, and the valid and invalid cases above in a shuffled, repeated order.
    @Test func theDateCacheParsesWhatTheParserParses() {
        var texts = [
            "2026-11-30T08:59:58Z", "2026-11-30T08:59:01.5Z", "2026-11-30T08:59:60Z", "2026-11-30T08:59:59+01:00",
            "2026-11-30T08:59:5xZ", "2026-11-30T08:59:", "2026-11-30T08:59:00-23:59", "2026-02-30T08:59:58Z",
            "2026-02-30T08:59:58Z", "2026-11-30T08:58:58Z", "2026-11-30T08:59:58Z", "9999-12-31T23:59:59Z",
            "9999-12-31T23:59:59-00:01", "9999-12-31T23:59:59-00:01", "0000-01-01T00:00:00+00:01",
        ]
        texts += [
            "1970-01-01T00:00:00Z", "2026-11-30T08:59:58.250Z", "2026-11-30T10:59:58+02:00",
            "2026-11-30T03:29:58-05:30", "2026-11-30t08:59:58.123456789999z", "2024-02-29T00:00:00Z",
            "1969-12-31T23:59:59.5Z", "2026-13-01T00:00:00Z", "2026-11-30T24:00:00Z", "2026-11-30 08:59:58Z",
            "2026-11-30T08:59:58.Z", "2026-11-30T08:59:58+0200", "2026-11-30T08:59:58Z ", "", "yesterday",
        ]
        texts += [
            "2026-11-30T09:00:00Z", "2026-11-30T23:59:59.999Z", "2026-11-30T08:5x:58Z", "2026-11-30X08:59:58Z",
            "2026-11-30T08-59:58Z", "2026-11-30T08:59-58Z", "2026-11-30T08:60:00Z", "2026-11-31T08:59:58Z",
            "2026-11-3xT08:59:58Z", "2026-11-30T00:00:00Z",
        ]
        var random = SeededGenerator(seed: 11)
        var cache = Timestamp.DatePrefixCache()
        for round in 0..<4 {
            let order = round == 0 ? texts : texts.shuffled(using: &random)
            for text in order {
                let alone = Timestamp(rfc3339: text)
                let cached = Array(text.utf8).withUnsafeBytes { Timestamp.parse($0, cache: &cache) }
                #expect(cached == alone, "round \(round): \(text)")
            }
        }
    }

    @Test func agreesWithFoundation() throws {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let text = "2026-11-30T08:59:58.250Z"
        let expected = try #require(formatter.date(from: text))
        #expect(try #require(Timestamp(rfc3339: text)).date == expected)
    }

    /// The date-and-minute prefix is checked a word at a time: every byte value at every one of its 17 positions,
    /// in a time that is valid as written and in one at the edge of its ranges, gives what a byte-by-byte reading of
    /// the contract gives, through the parser and through the minute cache.
    @Test(arguments: ["2024-02-29T23:59:07.25Z", "2026-11-30T08:05:58Z", "2026-12-31t00:00:00+01:00"])
    func everyByteOfTheMinutePrefixIsChecked(valid text: String) {
        var cache = Timestamp.DatePrefixCache()
        for position in 0..<17 {
            for value in 0...255 {
                var bytes = Array(text.utf8)
                bytes[position] = UInt8(value)
                let parsed = bytes.withUnsafeBytes { Timestamp.parse($0) }
                let cached = bytes.withUnsafeBytes { Timestamp.parse($0, cache: &cache) }
                let expected = Self.referenceMinute(bytes).flatMap { minute in
                    // The rest of the text is unchanged and valid: only the prefix decides.
                    let rest = Timestamp(rfc3339: text)!.secondsSinceEpoch - Self.referenceMinute(Array(text.utf8))!
                    return Timestamp(
                        secondsSinceEpoch: minute + rest, nanoseconds: Timestamp(rfc3339: text)!.nanoseconds)
                }
                #expect(parsed == expected, "byte \(value) at \(position) of \(text)")
                #expect(cached == expected, "byte \(value) at \(position) of \(text), cached")
            }
        }
    }

    /// `YYYY-MM-DDTHH:MM:` read one byte at a time as the contract states it: the seconds since the epoch of that
    /// minute, or nil.
    static func referenceMinute(_ bytes: [UInt8]) -> Int64? {
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for index in range {
                guard bytes[index] >= UInt8(ascii: "0") && bytes[index] <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(bytes[index] - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), bytes[4] == UInt8(ascii: "-"),
            bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T") || bytes[10] == UInt8(ascii: "t"),
            bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"), (1...12).contains(month), day >= 1,
            hour <= 23, minute <= 59
        else { return nil }
        // The calendar arithmetic is the parser's own (unchanged by the word-at-a-time check, and tested above).
        guard day <= Timestamp.daysInMonth(year: year, month: month) else { return nil }
        return Timestamp.daysFromCivil(year: year, month: month, day: day) * 86_400 + Int64(hour * 3600 + minute * 60)
    }
}
