import Testing

@testable import Rollups

/// The aggregator's cache of normalized coding paths answers what `RollupSample.normalizedPath` would, whether it
/// holds the path, held another in the slot, or never saw it.
@Suite struct NormalizedPathCacheTests {
    static let paths: [String] = {
        var paths = (0..<200).map { "page.sections.Index \($0 % 7).widgets.Index \($0 % 13)" }
        paths += [
            "", "a", "page", "sections.Index", "Index 7", "xIndex 7", "page.sections.Index *.widgets.Index 3",
            "Index 12345678901234567890", String(repeating: "sections.Index 1.", count: 40), "é.Index 1",
            "e\u{301}.Index 1", "😀.Index 0",
        ]
        return paths
    }()

    @Test(arguments: [1, 8, 256])
    func everyAnswerIsTheNormalizedPath(slots: Int) {
        var cache = NormalizedPathCache(slots: slots)
        for round in 0..<3 {
            for path in Self.paths.shuffled() {
                let expected = RollupSample.normalizedPath(path)
                let answer = cache.normalized(path)
                // Bytes, not `==`: samples order by UTF-8 bytes, so a canonically equivalent answer is still wrong.
                #expect(Array(answer.utf8) == Array(expected.utf8), "round \(round): \(path)")
            }
        }
    }

    /// A path equal to the held one but in another `String` (decoded from other bytes of the same text) is a hit;
    /// a canonically equivalent path with other bytes gets its own bytes' normalization.
    @Test func equalTextHitsAndEquivalentTextDoesNot() {
        var cache = NormalizedPathCache(slots: 1)
        let held = "page.sections.Index 3.widgets.Index 12"
        #expect(cache.normalized(held) == "page.sections.Index *.widgets.Index *")
        let copy = String(decoding: Array(held.utf8), as: UTF8.self)
        #expect(cache.normalized(copy) == "page.sections.Index *.widgets.Index *")
        let composed = "caf\u{E9}.Index 1"
        let decomposed = "cafe\u{301}.Index 1"
        #expect(Array(cache.normalized(composed).utf8) == Array("caf\u{E9}.Index *".utf8))
        #expect(Array(cache.normalized(decomposed).utf8) == Array("cafe\u{301}.Index *".utf8))
    }
}
