import FlowmeterModels
import Foundation
import Gzip
import TestSupport

/// Seeded, reproducible hostile bodies for `POST /v1/diagnostics`: a valid batch full of legal-but-nasty strings,
/// then mutated the ways a fuzzer or an attacker would (bit flips, truncations, splices of odd values, duplicated
/// keys, invalid UTF-8, deep nesting, huge strings), some of them gzipped (and some gzip streams corrupted).
///
/// The same seed gives the same bodies (times are relative to `now`), so a failing run can be replayed with
/// `FLOWMETER_HOSTILE_SEED`.
struct HostileBatches {
    /// One body to post.
    struct Body {
        /// The bytes on the wire.
        var bytes: [UInt8]
        /// Whether `bytes` is a gzip stream (sent with `Content-Encoding: gzip`).
        var isGzipped: Bool
        /// What was done to the base batch, for failure messages.
        var mutations: [String]
    }

    typealias Random = SeededGenerator

    /// A JSON text being written, with the byte ranges of its scalar values and keys, where splices go.
    struct Document {
        var bytes: [UInt8] = []
        var values: [Range<Int>] = []
        var keys: [Range<Int>] = []
        /// Offsets just after each `{`, where a member can be inserted.
        var objectStarts: [Int] = []

        mutating func raw(_ text: String) { bytes += Array(text.utf8) }

        mutating func key(_ name: String) {
            let start = bytes.count
            string(name, record: false)
            keys.append(start..<bytes.count)
            raw(":")
        }

        mutating func string(_ text: String, record: Bool = true) {
            let start = bytes.count
            bytes.append(UInt8(ascii: "\""))
            for scalar in text.unicodeScalars {
                switch scalar {
                case "\"": raw("\\\"")
                case "\\": raw("\\\\")
                default:
                    if scalar.value < 0x20 {
                        raw(String(format: "\\u%04x", scalar.value))
                    } else {
                        bytes += Array(String(scalar).utf8)
                    }
                }
            }
            bytes.append(UInt8(ascii: "\""))
            if record { values.append(start..<bytes.count) }
        }

        mutating func number(_ value: Int64) {
            let start = bytes.count
            raw(String(value))
            values.append(start..<bytes.count)
        }

        mutating func member(_ name: String, _ value: String, first: Bool = false) {
            if !first { raw(",") }
            key(name)
            string(value)
        }

        mutating func open() {
            raw("{")
            objectStarts.append(bytes.count)
        }
    }

    /// Odd JSON values spliced in for a scalar: numbers JSON has no room for, broken escapes, lone surrogates,
    /// control characters, formulas and markup, impossible times.
    static let oddValues: [String] = [
        "NaN", "-NaN", "Infinity", "-Infinity", "1e400", "-1e400", "1e-400", "-0", "0e0", "01", "1.", ".5", "+1",
        "0x10", "123456789012345678901234567890", "9223372036854775808", "-9223372036854775809", "1E+2147483648",
        "true", "false", "null", "[]", "{}", "\"\"", "\" \"", "\"\\u0000\"", "\"a\\u0000b\"", "\"\\ud800\"",
        "\"\\udc00\"", "\"\\ud800\\u0041\"", "\"\\udfff\\ud800\"", "\"\\ud83d\\ude00\"", "\"\\u001b[2J\\u001b[31m\"",
        "\"\\u202e\\u2066\"", "\"\\n\\r\\t\\b\\f\"", "\"\\u0085\\u009b\"", "\"\\x41\"", "\"\\u12\"", "\"\\u",
        "\"unterminated", "\"=cmd|' /C calc'!A0\"", "\"<script>alert(1)</script>\"", "\"2026-02-30T25:61:61Z\"",
        "\"9999-12-31T23:59:59Z\"", "\"0000-01-01T00:00:00Z\"", "\"2026-11-30T08:59:58+99:99\"", "-1", "0",
        "[1,2,3]", "{\"kind\":\"x\"}", "\"\\/\\/\"",
    ]

    /// Raw byte sequences no JSON text may hold: invalid UTF-8, an encoded surrogate, a code point past U+10FFFF,
    /// raw control bytes inside a string.
    static let oddBytes: [[UInt8]] = [
        [0xFF, 0xFE], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0x80], [0xE2, 0x82],
        [0x00], [0x1B, 0x5B, 0x32, 0x4A], [0x0A], [0x7F], [0xC2, 0x9B], [0xEF, 0xBB, 0xBF],
    ]

    static let seedWidgetTypes = [
        "hologram_projector", "image_text_card", "title_block", HostileStore.markup, HostileStore.formula,
        HostileStore.wide, "abc\u{202E}fed", "x y z", String(repeating: "w", count: 200),
    ]
    static let kinds = ["unknownType", "malformedPayload", "droppedElement", "duplicateID", "unknownArrangement"]

    private(set) var random: Random
    /// Seconds since the epoch that times are relative to.
    let now: Int64

    init(seed: UInt64, now: Int64) {
        random = Random(seed: seed)
        self.now = now
    }

    /// The next body: about one in ten unmutated, the rest with one to three mutations.
    mutating func next() -> Body {
        var document = base()
        var mutations: [String] = []
        if !random.chance(0.1) {
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                mutations.append(mutate(&document))
            }
        }
        guard random.chance(0.15) else { return Body(bytes: document.bytes, isGzipped: false, mutations: mutations) }
        var compressed = Gzip.compress(document.bytes)
        if random.chance(0.3) {
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                let index = Int.random(in: 0..<compressed.count, using: &random)
                compressed[index] ^= UInt8(1 << Int.random(in: 0..<8, using: &random))
            }
            mutations.append("gzip bit flips")
        } else if random.chance(0.2) {
            compressed.removeLast(Int.random(in: 1...min(16, compressed.count), using: &random))
            mutations.append("gzip truncated")
        }
        return Body(bytes: compressed, isGzipped: true, mutations: mutations + ["gzip"])
    }

    /// A valid batch whose strings are legal but nasty: markup, formulas, wide characters, bidi overrides in
    /// identifiers; control characters, NUL and 70,000 characters in free text.
    mutating func base(appVersion: String? = nil, widgetType: String? = nil) -> Document {
        var document = Document()
        document.open()
        document.member("id", "batch-\(random.next())", first: true)
        document.member("sentAt", Self.time(now))
        document.raw(",")
        document.key("client")
        document.open()
        document.member(
            "appID", random.pick(["com.example.shop", "com.example.reader", "com.hostile.app"]), first: true)
        document.member("appVersion", appVersion ?? random.pick(["5.2.1", "5.3.0", "6.0.0-beta (600)", "=1+1"]))
        document.member("build", String(Int.random(in: 1...9999, using: &random)))
        document.member("platform", random.pick(["ios", "android"]))
        document.member("osVersion", "18.1")
        document.member("sdkVersion", "1.4.0")
        document.member("installID", "install-\(Int.random(in: 0..<500, using: &random))")
        document.member("buildConfiguration", random.chance(0.1) ? "debug" : "release")
        document.member("unknownPolicy", random.pick(["skip", "placeholder"]))
        document.raw(",")
        document.key("capabilities")
        document.open()
        document.key("maxSchemaVersion")
        document.number(7)
        document.raw(",")
        document.key("registeredTypes")
        document.raw("[")
        document.string("title_block")
        document.raw(",")
        document.string(HostileStore.markup)
        document.raw("]}}")
        document.raw(",")
        document.key("decodes")
        document.number(Int64.random(in: 0...100, using: &random))
        document.raw(",")
        document.key("events")
        document.raw("[")
        for index in 0..<Int.random(in: 1...6, using: &random) {
            if index > 0 { document.raw(",") }
            document.open()
            document.member("id", "event-\(random.next())", first: true)
            document.member("kind", random.pick(Self.kinds))
            document.member("widgetType", widgetType ?? random.pick(Self.seedWidgetTypes))
            document.member("codingPath", random.pick(["page.sections.Index 0.widgets.Index 1", "=SUM(A1)", "a\nb"]))
            let message =
                random.chance(0.05)
                ? String(repeating: "m", count: 70_000)
                : random.pick([
                    "Unknown widget type", "line1\nforged line\r\n", "esc\u{1B}[2J\u{1B}]0;title\u{7}",
                    "nul\u{0}after", HostileStore.markup, HostileStore.bidi,
                ])
            document.member("message", message)
            document.member("pageID", random.pick(["home", "cart", HostileStore.markup]))
            document.member("surface", "page")
            document.member("backendRelease", random.pick(["page-api@2026.11.30-2", "page-api@<b>"]))
            document.raw(",")
            document.key("count")
            document.number(Int64.random(in: 1...5, using: &random))
            document.member("occurredAt", Self.time(now - Int64.random(in: 0...7200, using: &random)))
            document.raw("}")
        }
        document.raw("]}")
        return document
    }

    /// Applies one mutation (its ranges go stale afterwards, which only makes later splices land oddly).
    private mutating func mutate(_ document: inout Document) -> String {
        var bytes = document.bytes
        defer { document.bytes = bytes }
        func span(_ spans: [Range<Int>]) -> Range<Int>? {
            let valid = spans.filter { $0.upperBound <= bytes.count }
            return valid.isEmpty ? nil : random.pick(valid)
        }
        switch Int.random(in: 0..<10, using: &random) {
        case 0:
            let flips = Int.random(in: 1...8, using: &random)
            for _ in 0..<flips {
                let index = Int.random(in: 0..<bytes.count, using: &random)
                bytes[index] ^= UInt8(1 << Int.random(in: 0..<8, using: &random))
            }
            return "\(flips) bit flips"
        case 1:
            let end = Int.random(in: 0..<bytes.count, using: &random)
            bytes.removeSubrange(end...)
            return "truncated at \(end)"
        case 2, 3:
            guard let value = span(document.values) else { return "no value" }
            let odd = random.pick(Self.oddValues)
            bytes.replaceSubrange(value, with: Array(odd.utf8))
            return "value → \(odd)"
        case 4:
            guard let value = span(document.values), value.count >= 2 else { return "no string" }
            let odd = random.pick(Self.oddBytes)
            bytes.insert(contentsOf: odd, at: value.lowerBound + 1)
            return "bytes \(odd) in a value"
        case 5:
            guard let value = span(document.values) else { return "no value" }
            let depth = random.pick([513, 600, 2_000])
            let nested =
                random.chance(0.5)
                ? String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
                : String(repeating: "{\"a\":", count: depth) + "1" + String(repeating: "}", count: depth)
            bytes.replaceSubrange(value, with: Array(nested.utf8))
            return "\(depth)-deep value"
        case 6:
            guard let value = span(document.values) else { return "no value" }
            let filler = random.pick(["x", "\\u0000", "\\ud800", "é", "\\\""])
            let huge = "\"" + String(repeating: filler, count: 70_000) + "\""
            bytes.replaceSubrange(value, with: Array(huge.utf8))
            return "70,000 × \(filler)"
        case 7:
            guard let start = document.objectStarts.filter({ $0 <= bytes.count }).randomElement(using: &random)
            else { return "no object" }
            let duplicate = random.pick([
                #""kind":"\u0000","#, #""kind":"a","kind":"b","#, #""appID":"com.other","#, #""events":{},"#,
                #""widgetType":null,"#, #""count":-5,"#, #""occurredAt":"now","#, #""client":[],"#,
            ])
            bytes.insert(contentsOf: Array(duplicate.utf8), at: start)
            return "member \(duplicate)"
        case 8:
            guard let key = span(document.keys) else { return "no key" }
            let odd = random.pick([#""""#, #""kind\u0000""#, #""KIND""#, #""\ud800""#, "1", "null", #""k"""#])
            bytes.replaceSubrange(key, with: Array(odd.utf8))
            return "key → \(odd)"
        default:
            let from = Int.random(in: 0..<bytes.count, using: &random)
            let length = Int.random(in: 1...min(64, bytes.count - from), using: &random)
            let piece = Array(bytes[from..<(from + length)])
            let to = Int.random(in: 0...bytes.count, using: &random)
            bytes.insert(contentsOf: piece, at: to)
            return "spliced \(length) bytes from \(from) to \(to)"
        }
    }

    /// `seconds` as RFC 3339.
    static func time(_ seconds: Int64) -> String {
        Timestamp(secondsSinceEpoch: seconds).rfc3339String
    }
}

extension SeededGenerator {
    /// True with probability `probability`.
    mutating func chance(_ probability: Double) -> Bool { Double.random(in: 0..<1, using: &self) < probability }
    /// One of `values` (not empty).
    mutating func pick<T>(_ values: [T]) -> T { values[Int.random(in: 0..<values.count, using: &self)] }
}
