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
}
