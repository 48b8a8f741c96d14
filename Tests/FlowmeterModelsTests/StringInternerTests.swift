import Testing

@testable import FlowmeterModels

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
}
