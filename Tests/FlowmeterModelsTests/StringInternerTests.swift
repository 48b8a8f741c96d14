import Foundation
import TestSupport
import Testing

@testable import FlowmeterModels
@testable import FlowmeterWire

/// The decoder's `StringInterner` hands back the very string the bytes spell, cached or not.
@Suite struct StringInternerTests {
    /// Many distinct long values (every slot collides), repeats, short and over-long ones: each comes back equal.
    @Test func theInternerReturnsWhatTheBytesSpell() {
        var interner = StringInterner()
        var values = (0..<200).map { "coding.path.sections.Index \($0 % 70).widgets.Index \($0 % 13)" }
        values += [
            "short", "", String(repeating: "x", count: 129), String(repeating: "é", count: 40), "😀 emoji text ok",
        ]
        for round in 0..<3 {
            for value in values.shuffled() {
                let interned = Array(value.utf8).withUnsafeBytes { interner.string($0) }
                #expect(interned == value, "round \(round)")
            }
        }
    }

    /// Two values whose hashes pick the same home slot both stay cached (the interner is two-way), and a third one
    /// there replaces one of them without ever handing back a string for other bytes.
    @Test func valuesSharingAHomeSlotBothStayCached() {
        var interner = StringInterner(slots: 1_024)
        // 1,024 slots: the home slot is the hash's top ten bits.
        func home(_ value: String) -> UInt64 {
            Array(value.utf8).withUnsafeBytes { StringInterner.hash($0.baseAddress!, count: $0.count) >> 54 }
        }
        var byHome: [UInt64: [String]] = [:]
        var index = 0
        while byHome.values.allSatisfy({ $0.count < 3 }) {
            let value = "a value long enough for heap storage \(index)"
            byHome[home(value), default: []].append(value)
            index += 1
        }
        let values = byHome.values.first { $0.count == 3 }!
        func intern(_ value: String) -> String { Array(value.utf8).withUnsafeBytes { interner.string($0) } }
        let first = intern(values[0])
        let second = intern(values[1])
        #expect(storageAddress(of: intern(values[0])) == storageAddress(of: first))
        #expect(storageAddress(of: intern(values[1])) == storageAddress(of: second))
        #expect(intern(values[2]) == values[2])
        #expect(intern(values[0]) == values[0])
        #expect(intern(values[1]) == values[1])
        #expect(intern(values[2]) == values[2])
    }
}

/// An interner kept across decodes, as the collector lends them: same results, and values repeated across batches
/// come from the cache.
@Suite struct KeptInternerTests {
    @Test func decodingWithAKeptInternerGivesWhatAFreshDecodeGives() throws {
        var interner = StringInterner(slots: 1_024)
        for seed in 0..<40 {
            let body = SyntheticBatches.batch(seed: UInt64(seed % 13))
            let kept = try FastBatchDecoder.decode(body, maxEvents: 1_000, interner: &interner)
            let fresh = try FastBatchDecoder.decode(body)
            #expect(kept.batch == fresh.batch, "seed \(seed)")
            #expect(kept.dropped == fresh.dropped)
            #expect(kept.droppedIndices == fresh.droppedIndices)
        }
        #expect(interner.slotCount == 1_024)
    }

    @Test func aValueRepeatedInALaterBatchIsTheCachedString() throws {
        var interner = StringInterner(slots: 1_024)
        let first = try FastBatchDecoder.decode(SyntheticBatches.batch(seed: 1), interner: &interner)
        let second = try FastBatchDecoder.decode(SyntheticBatches.batch(seed: 2), interner: &interner)
        let earlier = first.batch.events.compactMap(\.codingPath)
        var repeated = 0
        var cached = 0
        for path in second.batch.events.compactMap(\.codingPath) {
            guard let match = earlier.first(where: { $0 == path }) else { continue }
            repeated += 1
            if storageAddress(of: path) == storageAddress(of: match) { cached += 1 }
        }
        // Direct-mapped: a value the later batch's own values collided with is made again, the rest is cached.
        #expect(repeated > 10)
        #expect(cached * 10 >= repeated * 8, "\(cached) of \(repeated) repeats cached")
    }

    /// Values that differ only in a word's last byte (coding paths differing in one index digit) spread over the
    /// table: an interner that took its slot from the hash's low bits put 72 such paths in 12 slots, so repeats
    /// within a batch and across batches missed the cache.
    @Test func valuesDifferingInOneDigitGetTheirOwnSlots() {
        var interner = StringInterner(slots: 1_024)
        let values = (0..<6).flatMap { section in
            (0..<12).map { widget in "sections.Index \(section).widgets.Index \(widget)" }
        }
        let made = values.map { value in Array(value.utf8).withUnsafeBytes { interner.string($0) } }
        let again = values.map { value in Array(value.utf8).withUnsafeBytes { interner.string($0) } }
        #expect(zip(values, again).allSatisfy { $0 == $1 })
        let hits = zip(made, again).filter { storageAddress(of: $0) == storageAddress(of: $1) }.count
        // 72 values in 1,024 slots: a few collide at most.
        #expect(hits >= 66, "\(hits) of 72 cached")
    }

    /// The client's fields are cached (every batch of an app build repeats them), the install ID never: a kept
    /// interner must not hold a raw install ID past its batch.
    @Test func theInstallIDIsNeverCachedAndTheClientsFieldsAre() throws {
        var interner = StringInterner(slots: 1_024)
        let decoded = try FastBatchDecoder.decode(SyntheticBatches.batch(seed: 3), interner: &interner)
        let client = decoded.batch.client
        let installID = try #require(client.installID)
        #expect(!interner.holds(installID))
        #expect(interner.holds(client.appID))
        #expect(interner.holds(client.appVersion))
        #expect(interner.holds(client.platform))
    }

    /// A batch that fills the table with its own values leaves the next batch's values exact.
    @Test func aHostileBatchOnlyCostsTheNextOneItsCache() throws {
        var interner = StringInterner(slots: 64)
        let hostile = (0..<5_000).map { "junk-\($0)-\(String(repeating: "z", count: $0 % 90))" }
        for value in hostile { _ = Array(value.utf8).withUnsafeBytes { interner.string($0) } }
        let body = SyntheticBatches.batch(seed: 7)
        #expect(try FastBatchDecoder.decode(body, interner: &interner).batch == FastBatchDecoder.decode(body).batch)
    }
}

/// The interner's remembered ``IdentifierRule`` verdicts: the same answer as checking the string, on a miss, on a
/// hit, and after a collision replaced the entry.
@Suite struct InternerVerdictTests {
    static let samples: [[UInt8]] = [
        Array("unknownType".utf8), Array("ios".utf8), Array("hologram_projector".utf8), Array("   ".utf8),
        Array("\u{A0}\u{2003}".utf8), Array("abc\u{7F}".utf8), Array("tab\there".utf8), Array("x\u{85}y".utf8),
        // Invalid UTF-8: decoding repairs it, and the rule applies to the repaired string (C2 41 is "\u{FFFD}A",
        // not the control character a byte check of C2 followed by a byte up to 9F would see).
        [0xC2, 0x41], [0xC2], [0xFF, 0x61, 0x62], [0xC2, 0x85],
        Array("page-api@2026.11.30-2".utf8), Array(String(repeating: "w", count: 128).utf8),
        Array(String(repeating: "w", count: 129).utf8), [],
    ]

    @Test(arguments: [1, 4, 1_024])
    func verdictsMatchTheRuleOnMissesAndHits(slots: Int) {
        var interner = StringInterner(slots: slots)
        for round in 0..<3 {
            for bytes in Self.samples.shuffled() {
                let expected = String(decoding: bytes, as: UTF8.self)
                let (value, violation) = bytes.withUnsafeBytes { interner.identifier($0) }
                #expect(value == expected, "round \(round)")
                #expect(violation == IdentifierRule.violation(in: expected), "round \(round): \(bytes)")
                // A plain lookup of the same bytes in between must not change the next verdict.
                #expect(bytes.withUnsafeBytes { interner.string($0) } == expected)
            }
        }
    }

    @Test func aBatchWithBadIdentifiersIsDecodedTheSameWithAKeptInterner() throws {
        let body = Array(
            #"""
            {"client":{"appID":"a","appVersion":"1","platform":"ios"},"events":[
            {"kind":"unknownType","occurredAt":"2026-12-01T00:00:00Z","widgetType":"   ","pageID":"home"},
            {"kind":"unknownType","occurredAt":"2026-12-01T00:00:00Z","widgetType":"ok_type","pageID":"home\u007f"},
            {"kind":"  ","occurredAt":"2026-12-01T00:00:00Z"},
            {"kind":"unknownType","occurredAt":"2026-12-01T00:00:00Z","widgetType":"   ","pageID":"home"},
            {"kind":"unknownType","occurredAt":"2026-12-01T00:00:00Z","widgetType":"ok_type","pageID":"ho\#u{7F}"},
            {"kind":"unknownType","occurredAt":"2026-12-01T00:00:00Z","widgetType":"ok_type","pageID":"home"}]}
            """#.utf8)
        var interner = StringInterner(slots: 8)
        for round in 0..<3 {
            let kept = try FastBatchDecoder.decode(body, interner: &interner)
            let reference = try CodableBatchDecoder.decode(Data(body))
            #expect(kept.batch == reference.batch, "round \(round)")
            #expect(kept.dropped == reference.dropped, "round \(round)")
            #expect(kept.batch.events.count == 1)
        }
    }

}

/// `memoryEqual`, which the parser's key match and the interner's hit check use: word-wise, with overlapping tails.
@Suite struct MemoryEqualTests {
    /// Every length from 0 to 70 at every alignment: equal ranges are equal, and one changed byte anywhere (the
    /// first, the last, inside the overlapped tail word) is found.
    @Test func everyLengthAndEveryDifferingByte() {
        let source = (0..<160).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
        for count in 0...70 {
            for shift in 0..<8 {
                var copy = Array(source[shift..<(shift + count)])
                source.withUnsafeBufferPointer { original in
                    let left = original.baseAddress! + shift
                    copy.withUnsafeBytes { #expect(memoryEqual(left, $0.baseAddress, count), "count \(count)") }
                    for position in 0..<count {
                        copy[position] ^= 0x80
                        copy.withUnsafeBytes {
                            #expect(!memoryEqual(left, $0.baseAddress, count), "count \(count), byte \(position)")
                        }
                        copy[position] ^= 0x80
                    }
                }
            }
        }
    }

    /// A nil right side is equal only to nothing.
    @Test func aNilRangeIsEqualOnlyWhenEmpty() {
        let bytes: [UInt8] = [1, 2, 3]
        bytes.withUnsafeBufferPointer { buffer in
            #expect(memoryEqual(buffer.baseAddress!, nil, 0))
            #expect(!memoryEqual(buffer.baseAddress!, nil, 3))
        }
    }
}
