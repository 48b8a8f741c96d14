import Testing

@testable import FlowmeterModels
@testable import FlowmeterWire

/// The digest cache answers `hashValue`, whether it holds the string, held another in the slot, or never saw it.
@Suite struct StringDigestCacheTests {
    @Test(arguments: [1, 8, 256])
    func everyDigestIsTheStringsHashValue(slots: Int) {
        var cache = StringDigestCache(slots: slots)
        var values = (0..<300).map { "widget_type_\($0 % 97)" }
        values += [
            "", "a", "unknownType", "hologram_projector", String(repeating: "x", count: 300), "caf\u{E9}",
            "cafe\u{301}", "😀", "sections.Index 1.widgets.Index 9", "sections.Index 1.widgets.Index 8",
        ]
        for round in 0..<3 {
            for value in values.shuffled() {
                #expect(cache.digest(value) == value.hashValue, "round \(round): \(value)")
            }
        }
    }

    /// Canonically equivalent strings are equal in Swift and hash alike; so must their digests, or a key built from
    /// digests would break `Hashable`'s rule that equal values hash equally.
    @Test func canonicallyEquivalentStringsGetEqualDigests() {
        var cache = StringDigestCache(slots: 4)
        let composed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        #expect(composed == decomposed)
        #expect(cache.digest(composed) == cache.digest(decomposed))
        #expect(cache.digest(decomposed) == cache.digest(composed))
    }
}
