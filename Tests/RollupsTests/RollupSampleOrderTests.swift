import Testing

@testable import Rollups

/// `compareNormalized` (the aggregator's shortcut) against building the normalized path and comparing bytes.
@Suite struct RollupSampleOrderTests {
    static let raws = [
        "", "a", "page", "page.sections.Index 0", "page.sections.Index 12.widgets.Index 3",
        "page.sections.Index *.widgets.Index 3", "sections.Index 9", "sections.Index 10", "sections.Index",
        "Index 7", "xIndex 7", "page.sections.Index 0.widgets", "zz", "é.Index 1", "Index 12345678901234567890",
    ]

    static func expected(_ raw: String, _ normalized: String) -> RollupSample.ComparisonOrder {
        let left = Array(RollupSample.normalizedPath(raw).utf8)
        let right = Array(normalized.utf8)
        if left == right { return .orderedSame }
        return left.lexicographicallyPrecedes(right) ? .orderedAscending : .orderedDescending
    }

    @Test func ordersEveryPairAsTheNormalizedPathWould() {
        let normalized = Self.raws.map(RollupSample.normalizedPath) + ["page.sections.Index *", "", "page.sections.J"]
        for raw in Self.raws {
            for other in normalized {
                #expect(
                    RollupSample.compareNormalized(raw, to: other) == Self.expected(raw, other), "\(raw) vs \(other)")
            }
        }
    }

    /// Random paths built from the pieces that matter (`Index `, digit runs, `*`, separators), long enough to cross
    /// the eight-byte words the comparison skips equal bytes in, each against the normalized forms of the others.
    @Test func ordersRandomPathsAsTheNormalizedPathWould() {
        let pieces = ["Index ", "Index", " ", "1", "23", "4567890", "*", ".", "sections", "widgets", "x", "é"]
        var generator = SystemRandomNumberGenerator()
        var state = UInt64.random(in: 0 ... .max, using: &generator)
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(state >> 33) % bound
        }
        let seed = state
        let raws = (0..<300).map { _ in (0..<next(12)).map { _ in pieces[next(pieces.count)] }.joined() }
        let normalized = raws.map(RollupSample.normalizedPath)
        for raw in raws {
            for _ in 0..<20 {
                let other = normalized[next(normalized.count)]
                #expect(
                    RollupSample.compareNormalized(raw, to: other) == Self.expected(raw, other),
                    "seed \(seed): \(raw) vs \(other)")
            }
            // A normalized path against itself, and against itself one byte longer or shorter.
            let own = RollupSample.normalizedPath(raw)
            for other in [own, own + "a", String(own.utf8.dropLast()) ?? ""] {
                #expect(
                    RollupSample.compareNormalized(raw, to: other) == Self.expected(raw, other),
                    "seed \(seed): \(raw) vs \(other)")
            }
        }
    }

    /// `utf8Less` (memcmp over the bytes) against the generic byte-by-byte order: prefixes, empty strings, bytes
    /// above 0x7F (which must sort after ASCII, as unsigned bytes), small and heap strings.
    @Test func utf8LessIsTheOrderOfTheBytes() {
        let values = [
            "", "a", "ab", "abc", "abd", "b", "Z", "é", "e\u{301}", "ü", "😀", "home", "home2", "product_detail",
            "page-api@2026.11.30-2", "page-api@2026.11.30-10", String(repeating: "x", count: 40),
            String(repeating: "x", count: 41), "Unknown type 'hologram_projector'", "Unknown type 'title_block'",
        ]
        for left in values {
            for right in values {
                #expect(
                    utf8Less(left, right) == left.utf8.lexicographicallyPrecedes(right.utf8), "\(left) < \(right)")
            }
        }
    }
}
