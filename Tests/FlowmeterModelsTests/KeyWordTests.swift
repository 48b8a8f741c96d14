import Testing

@testable import FlowmeterModels
@testable import FlowmeterWire

/// The event parser's word-at-a-time key recognition: every constant spells its key, every event key is found with
/// its field index and length, and near misses fall to the general path (nil), which reads them as before.
@Suite struct KeyWordTests {
    /// The 16 bytes after an opening quote, as the parser loads them.
    static func words(_ text: String) -> (UInt64, UInt64) {
        var bytes = Array(text.utf8)
        bytes += Array(repeating: UInt8(ascii: " "), count: max(0, 16 - bytes.count))
        return bytes.withUnsafeBytes { raw in
            (raw.loadUnaligned(as: UInt64.self), raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        }
    }

    static func word(_ text: String) -> UInt64 {
        Array(text.utf8).enumerated().reduce(0) { $0 | UInt64($1.element) << UInt64($1.offset * 8) }
    }

    @Test func everyConstantSpellsItsBytes() {
        let constants: [(UInt64, String)] = [
            (KeyWord.id, "id\":"), (KeyWord.kind, "kind\":"), (KeyWord.count, "count\":"),
            (KeyWord.pageID, "pageID\":"), (KeyWord.message, "message\""), (KeyWord.surface, "surface\""),
            (KeyWord.widgetTy, "widgetTy"), (KeyWord.pe, "pe\":"), (KeyWord.codingPa, "codingPa"),
            (KeyWord.th, "th\":"), (KeyWord.occurred, "occurred"), (KeyWord.at, "At\":"),
            (KeyWord.backendR, "backendR"), (KeyWord.elease, "elease\":"),
        ]
        for (constant, text) in constants {
            #expect(constant == Self.word(text), "\(text)")
        }
    }

    @Test(arguments: FastBatchParser.eventKeys.indices)
    func everyEventKeyIsFoundWithItsFieldAndLength(field: Int) {
        let key = FastBatchParser.eventKeys[field].description
        for value in ["\"x\"", "1", " \"x\"", "null,"] {
            let (first, second) = Self.words(key + "\":" + value)
            let found = KeyWord.eventField(first, second)
            #expect(found?.field == field, "\(key)")
            #expect(found?.length == key.utf8.count + 2, "\(key)")
        }
    }

    @Test(arguments: [
        "kinds\":", "kind\" :", "Kind\":", "kind\"", "ids\":", "i\":", "counts\":", "coding\":", "codingPath\" :",
        "message\" :", "messages\":", "surfaces\":", "pageIDs\":", "widgetType\"", "occurredAt ", "backendRelease",
        "backendReleases\"", "other\":", "\":", "",
    ])
    func nearMissesTakeTheGeneralPath(text: String) {
        let (first, second) = Self.words(text)
        #expect(KeyWord.eventField(first, second) == nil, "\(text)")
    }
}
