import Foundation
import TestSupport

/// Seeded generator of valid, odd and broken batch documents for the differential test.
final class BatchGenerator {
    var random: SeededGenerator

    static let oddStrings = [
        "", "plain", "ünïcödé", "emoji 😀👍🏽", "🇫🇷 flag", "quote \" and \\ backslash", "line\nbreak\ttab", "nul\u{0}byte",
        "ctrl \u{1}\u{1f}", "slash / here", "\u{7f}del", "e\u{301} combining", String(repeating: "x", count: 300),
        String(repeating: "é", count: 140), String(repeating: "😀", count: 600), "日本語のテキスト", "\u{FEFF}bom",
        "\u{10FFFF}max", "\u{E000}private",
    ]
    static let times = [
        "2026-11-30T08:59:58Z", "2026-11-30T08:59:58.250Z", "2026-11-30T10:59:58+02:00",
        "2026-11-30T08:59:58.123456789123Z",
        "2026-11-30t08:59:58z", "2026-02-29T00:00:00Z", "2024-02-29T00:00:00Z", "2026-13-01T00:00:00Z",
        "2026-11-31T00:00:00Z", "2026-11-30T24:00:00Z", "2026-11-30T23:59:60Z", "2026-11-30 08:59:58Z",
        "2026-11-30T08:59:58",
        "2026-11-30T08:59:58.Z", "2026-11-30T08:59:58+0200", "0000-01-01T00:00:00Z", "0000-01-01T00:00:00+00:01",
        "9999-12-31T23:59:59.999999999Z", "9999-12-31T23:59:59-00:01", "", "yesterday",
    ]
    static let numbers = [
        "0", "1", "-1", "2", "17", "-0", "1.0", "1e2", "1E+2", "100e-2", "1.5", "1e400", "-1e400", "1e-400", "4.9e-324",
        "2e-324", "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
        "123456789012345678901234567890", "1.7976931348623157e308", "1.7976931348623159e308", "0.5e1", "1e19",
        "1e18", "12345678901234567890e-5", "0.0000000000000000000000000000001e31",
    ]
    static let kinds = ["unknownType", "malformedPayload", "droppedElement", "duplicateID", "unknownArrangement", ""]

    init(seed: UInt64) { random = SeededGenerator(seed: seed) }

    func string() -> TestJSON {
        .string(
            random.chance(70)
                ? "w\(random.next(below: 1000))_\(random.pick(["card", "grid", "tile"]))" : random.pick(Self.oddStrings)
        )
    }

    /// A value of a random type, occasionally deep or large.
    func anyValue(depth: Int = 0) -> TestJSON {
        switch random.next(below: 9) {
        case 0: return .null
        case 1: return .bool(random.chance(50))
        case 2: return .number(random.pick(Self.numbers))
        case 3 where depth < 3:
            return .array((0..<random.next(below: 3)).map { _ in anyValue(depth: depth + 1) })
        case 4 where depth < 3:
            return .object(
                (0..<random.next(below: 3)).map { _ in ("k\(random.next(below: 5))", anyValue(depth: depth + 1)) })
        case 5: return deep(random.pick([10, 200, 509, 510, 511, 512, 600]))
        default: return string()
        }
    }

    func deep(_ levels: Int) -> TestJSON {
        var value = TestJSON.number("1")
        for level in 0..<levels { value = level % 2 == 0 ? .array([value]) : .object([("d", value)]) }
        return value
    }

    /// A field value: usually right, sometimes null or another type.
    func field(_ right: () -> TestJSON, wrongChance: Int) -> TestJSON {
        random.chance(wrongChance) ? anyValue() : right()
    }

    func event(wrongChance: Int) -> TestJSON {
        if random.chance(wrongChance / 3) { return anyValue() }
        var members: [(String, TestJSON)] = []
        func maybe(_ key: String, _ percent: Int, _ value: () -> TestJSON) {
            if random.chance(percent) { members.append((key, value())) }
        }
        maybe("id", 80) { field({ .string("E-\(random.next(below: 99999))") }, wrongChance: wrongChance) }
        maybe("kind", 100 - wrongChance / 2) {
            field(
                { .string(random.chance(95) ? random.pick(Self.kinds.dropLast()) : random.pick(Self.kinds)) },
                wrongChance: wrongChance)
        }
        maybe("widgetType", 90) { field({ string() }, wrongChance: wrongChance) }
        maybe("codingPath", 80) {
            field({ .string("page.sections.Index \(random.next(below: 5)).widgets.Index 1") }, wrongChance: wrongChance)
        }
        maybe("message", 80) { field({ string() }, wrongChance: wrongChance) }
        maybe("pageID", 70) { field({ string() }, wrongChance: wrongChance) }
        maybe("surface", 50) { field({ .string("page") }, wrongChance: wrongChance) }
        maybe("backendRelease", 50) { field({ .string("page-api@2026.11.30-2") }, wrongChance: wrongChance) }
        maybe("count", 50) {
            field(
                { .number(random.chance(80) ? "\(1 + random.next(below: 9))" : random.pick(Self.numbers)) },
                wrongChance: wrongChance)
        }
        maybe("occurredAt", 100 - wrongChance / 2) {
            field(
                {
                    .string(
                        random.chance(85)
                            ? "2026-11-30T08:59:\(10 + random.next(below: 49)).25Z" : random.pick(Self.times))
                }, wrongChance: wrongChance)
        }
        maybe("futureKey", 10) { anyValue() }
        maybe("kind", 3) { anyValue() }  // a duplicate key: the first occurrence must win on both paths
        if random.chance(20) { members.shuffle(using: &random) }
        return .object(members)
    }

    func batch() -> TestJSON {
        let wrongChance = random.pick([0, 0, 2, 5, 15, 40])
        var client: [(String, TestJSON)] = []
        func maybe(_ key: String, _ percent: Int, _ value: () -> TestJSON) {
            if random.chance(percent) { client.append((key, value())) }
        }
        let batchWrong = wrongChance / 5
        maybe("appID", 100 - batchWrong) { field({ .string("com.example.shop") }, wrongChance: batchWrong) }
        maybe("appVersion", 100 - batchWrong) {
            field({ .string(random.pick(["5.2.1", "5.10.0 (5210)", "6"])) }, wrongChance: batchWrong)
        }
        maybe("build", 60) { field({ .string("5210") }, wrongChance: batchWrong) }
        maybe("platform", 100 - batchWrong) { field({ .string("ios") }, wrongChance: batchWrong) }
        maybe("osVersion", 60) { field({ string() }, wrongChance: batchWrong) }
        maybe("sdkVersion", 60) { field({ .string("1.4.0") }, wrongChance: batchWrong) }
        maybe("installID", 80) { field({ .string("3F2A9C1E-6B7D-4E8F-9A0B-1C2D3E4F5A6B") }, wrongChance: batchWrong) }
        maybe("buildConfiguration", 60) {
            field({ .string(random.pick(["debug", "release", "staging"])) }, wrongChance: batchWrong)
        }
        maybe("unknownPolicy", 60) {
            field({ .string(random.pick(["skip", "placeholder", "explode"])) }, wrongChance: batchWrong)
        }
        maybe("capabilities", 40) {
            field(
                {
                    var members: [(String, TestJSON)] = []
                    if random.chance(80) {
                        members.append(("maxSchemaVersion", field({ .number("7") }, wrongChance: batchWrong)))
                    }
                    if random.chance(80) {
                        members.append(
                            (
                                "registeredTypes",
                                field(
                                    {
                                        .array(
                                            (0..<random.next(below: 4)).map { _ in
                                                field({ string() }, wrongChance: batchWrong)
                                            })
                                    }, wrongChance: batchWrong)
                            ))
                    }
                    return .object(members)
                }, wrongChance: batchWrong)
        }
        var members: [(String, TestJSON)] = []
        func top(_ key: String, _ percent: Int, _ value: () -> TestJSON) {
            if random.chance(percent) { members.append((key, value())) }
        }
        top("id", 80) { field({ .string("B-\(random.next(below: 99999))") }, wrongChance: batchWrong) }
        top("sentAt", 70) {
            field(
                { .string(random.chance(90) ? "2026-11-30T09:00:00.250Z" : random.pick(Self.times)) },
                wrongChance: batchWrong)
        }
        top("client", 100 - batchWrong) { field({ .object(client) }, wrongChance: batchWrong) }
        top("decodes", 60) {
            field({ .number(random.chance(90) ? "132" : random.pick(Self.numbers)) }, wrongChance: batchWrong)
        }
        top("events", 100 - batchWrong) {
            field(
                { .array((0..<random.next(below: 12)).map { _ in event(wrongChance: wrongChance) }) },
                wrongChance: batchWrong)
        }
        top("extra", 10) { anyValue() }
        top("events", 2) { .array([]) }
        if random.chance(30) { members.shuffle(using: &random) }
        return .object(members)
    }

    /// Byte-level damage: truncation, a flipped or inserted byte, invalid UTF-8, trailing commas, garbage.
    func damage(_ bytes: [UInt8]) -> [UInt8] {
        var bytes = bytes
        guard !bytes.isEmpty else { return bytes }
        let at = random.next(below: bytes.count)
        switch random.next(below: 9) {
        case 0: bytes.removeSubrange(at...)
        case 1: bytes[at] = UInt8(truncatingIfNeeded: random.next())
        case 2:
            bytes.insert(random.pick([0xFF, 0xC0, 0xED, 0xF4, 0x80, 0x00, 0x7F, 0x22, 0x5C, 0x2C, 0x5D, 0x7D]), at: at)
        case 3:
            if let comma = bytes[at...].firstIndex(where: { $0 == UInt8(ascii: "}") || $0 == UInt8(ascii: "]") }) {
                bytes.insert(UInt8(ascii: ","), at: comma)
            }
        case 4: bytes.append(contentsOf: Array(random.pick([" ", "\n", "x", "{}", "\u{0}", " ,"]).utf8))
        case 5: bytes.insert(contentsOf: [0xEF, 0xBB, 0xBF], at: random.chance(70) ? 0 : at)
        case 6:
            if let slash = bytes[at...].firstIndex(of: UInt8(ascii: "\"")) {
                bytes.insert(
                    contentsOf: Array(
                        random.pick([
                            "\\ud800", "\\udc00", "\\ud83d\\ude00", "\\u00e9", "\\x", "\\u12G4", "\\ud800\\u0041",
                        ]).utf8), at: slash)
            }
        case 7: bytes.removeSubrange(at..<min(bytes.count, at + random.next(below: 4) + 1))
        default:
            if let space = bytes[at...].firstIndex(of: UInt8(ascii: ":")) {
                bytes.insert(
                    contentsOf: Array(random.pick([" ", "\t", "\r\n", "\u{0B}", "\u{A0}"]).utf8), at: space + 1)
            }
        }
        return bytes
    }

    /// One document for the differential test.
    func document() -> [UInt8] {
        let tree = random.chance(3) ? anyValue() : batch()
        let escapeChance = random.pick([0, 0, 5, 50])
        var bytes = tree.bytes(random: &random, escapeChance: escapeChance)
        if random.chance(25) { bytes = damage(bytes) }
        if random.chance(5) { bytes = damage(bytes) }
        return bytes
    }
}
