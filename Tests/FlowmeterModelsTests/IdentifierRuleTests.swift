import Foundation
import Testing

@testable import FlowmeterModels
@testable import FlowmeterWire

/// The identifier rule (docs/api.md#ingest): no control characters, not blank; one bad identifier drops its event, or
/// fails the batch when it is in `client`; free text keeps what it can. Both decode paths agree on every case.
@Suite struct IdentifierRuleTests {
    @Test(arguments: [
        ("\u{0}", IdentifierRule.Violation.controlCharacter), ("a\u{1F}b", .controlCharacter),
        ("x\u{7F}", .controlCharacter), ("\u{80}", .controlCharacter), ("ok\u{9F}", .controlCharacter),
        ("\n", .controlCharacter), ("", .blank), ("   ", .blank), ("\u{A0}\u{3000}\u{2003}", .blank),
    ])
    func rejects(value: String, violation: IdentifierRule.Violation) {
        #expect(IdentifierRule.violation(in: value) == violation)
        #expect(DiagnosticKind(rawValue: value) == nil)
    }

    @Test(arguments: [
        "unknownType", "image_text_card", " padded ", "é", "\u{A0}x", "😀", "\u{A1}", "日本語", "a b", "\u{200B}",
        "=cmd|'/c calc'!A0",
    ])
    func accepts(value: String) {
        #expect(IdentifierRule.violation(in: value) == nil)
    }

    static func event(_ fields: String) -> String {
        #"{"kind":"unknownType","widgetType":"w","occurredAt":"2026-11-30T08:59:58Z"\#(fields)}"#
    }

    static func batch(client: String = "", events: [String]) -> [UInt8] {
        let body =
            #"{"client":{"appID":"com.example.shop","appVersion":"5.2.1","platform":"ios"\#(client)},"events":["#
            + events.joined(separator: ",") + "]}"
        return Array(body.utf8)
    }

    static func decodeBoth(_ bytes: [UInt8]) throws -> DecodedBatch {
        #expect(DifferentialTests.disagreement(bytes) == nil, "\(DifferentialTests.show(bytes))")
        return try FastBatchDecoder.decode(bytes)
    }

    @Test(arguments: ["kind", "widgetType", "id", "pageID", "surface", "backendRelease"])
    func aControlCharacterInAnEventIdentifierDropsOnlyThatEvent(field: String) throws {
        // The bad value comes first: of duplicate keys, the first occurrence wins in both paths.
        let bad = #"{"\#(field)":"a\u0000b","kind":"unknownType","occurredAt":"2026-11-30T08:59:58Z"}"#
        let decoded = try Self.decodeBoth(Self.batch(events: [Self.event(""), bad, Self.event("")]))
        #expect(decoded.batch.events.count == 2)
        #expect(
            decoded.dropped == [
                DecodeDiagnostic(path: "events.Index 1.\(field)", message: "Control character in '\(field)'")
            ])
    }

    @Test func theIssueNineRequestDropsItsEvent() throws {
        let decoded = try Self.decodeBoth(
            Self.batch(events: [#"{"kind":"\u0000","widgetType":"x","occurredAt":"2026-11-30T08:59:58Z"}"#]))
        #expect(decoded.batch.events.isEmpty)
        #expect(decoded.dropped.map(\.path) == ["events.Index 0.kind"])
    }

    @Test(arguments: [
        #""  ""#, #""\t""#, #""\u0085""#, #""\u007f""#, "\"\u{7F}\"", "\"\u{85}\"", #""\u3000""#, #""""#,
    ])
    func blankOrControlKindsAreDropped(kind: String) throws {
        let decoded = try Self.decodeBoth(
            Self.batch(events: [#"{"kind":\#(kind),"occurredAt":"2026-11-30T08:59:58Z"}"#, Self.event("")]))
        #expect(decoded.batch.events.count == 1)
        #expect(decoded.dropped.map(\.path) == ["events.Index 0.kind"])
    }

    @Test func freeTextKeepsControlCharacters() throws {
        let decoded = try Self.decodeBoth(
            Self.batch(events: [Self.event(#","message":"a\u0000\u001b[31mb","codingPath":"p\nq""#)]))
        #expect(decoded.dropped.isEmpty)
        #expect(decoded.batch.events[0].message == "a\u{0}\u{1B}[31mb")
        #expect(decoded.batch.events[0].codingPath == "p\nq")
    }

    @Test(arguments: [
        "appID", "appVersion", "platform", "build", "installID", "buildConfiguration", "unknownPolicy", "osVersion",
        "sdkVersion",
    ])
    func aBadClientIdentifierFailsTheBatch(field: String) throws {
        // Duplicate keys: the first occurrence wins in both paths, so the bad value comes first.
        let body =
            #"{"client":{"\#(field)":"\u0001","appID":"com.example.shop","appVersion":"5.2.1","platform":"ios"},"#
            + #""events":[\#(Self.event(""))]}"#
        let bytes = Array(body.utf8)
        #expect(DifferentialTests.disagreement(bytes) == nil)
        #expect(throws: BatchDecodingError.self) { try FastBatchDecoder.decode(bytes) }
        do throws(BatchDecodingError) {
            _ = try FastBatchDecoder.decode(bytes)
        } catch {
            #expect(error.code == .invalidValue && error.path == "client.\(field)")
            #expect(error.message == "Control character in '\(field)'")
        }
    }

    @Test func blankAppVersionAndBadRegisteredTypesFailTheBatch() throws {
        for (client, path) in [
            (#","appVersion":" ""#, "client.appVersion"),
            (#","capabilities":{"registeredTypes":["ok","\u0000"]}"#, "client.capabilities.registeredTypes.Index 1"),
        ] {
            let body =
                #"{"client":{"appID":"com.example.shop""# + client
                + #","appVersion":"5.2.1","platform":"ios"},"events":[]}"#
            let bytes = Array(body.utf8)
            #expect(DifferentialTests.disagreement(bytes) == nil, "\(body)")
            do throws(BatchDecodingError) {
                _ = try FastBatchDecoder.decode(bytes)
                Issue.record("accepted \(body)")
            } catch {
                #expect(error.path == path)
            }
        }
    }

    @Test func aBadBatchIDFailsTheBatch() throws {
        let bytes = Array(
            (#"{"id":"\u0000","client":{"appID":"a","appVersion":"1","platform":"ios"},"events":[]}"#).utf8)
        #expect(DifferentialTests.disagreement(bytes) == nil)
        #expect(throws: BatchDecodingError.self) { try FastBatchDecoder.decode(bytes) }
    }

    @Test func loneSurrogatesAreInvalidJSONInBothPaths() throws {
        for text in [#""\ud800""#, #""\udc00x""#, #""a\ud83d""#] {
            let bytes = Self.batch(events: [Self.event(#","message":\#(text)"#)])
            #expect(DifferentialTests.disagreement(bytes) == nil)
            do throws(BatchDecodingError) {
                _ = try FastBatchDecoder.decode(bytes)
                Issue.record("accepted \(text)")
            } catch {
                #expect(error.code == .invalidJSON)
            }
        }
    }
}

/// The rule's eight-bytes-at-a-time scan against the plain definition, at every offset around the word boundaries.
@Suite struct IdentifierRuleScanTests {
    static func reference(_ value: String) -> IdentifierRule.Violation? {
        if value.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) {
            return .controlCharacter
        }
        return value.unicodeScalars.allSatisfy { $0.properties.isWhitespace } ? .blank : nil
    }

    @Test func everyOffsetOfEveryOddCharacterMatchesTheDefinition() {
        let odd: [String] = [
            "\u{0}", "\u{1F}", "\u{7F}", "\u{85}", "\u{9F}", "\u{A0}", "é", "\u{2028}", " ", "\t", "x",
        ]
        for length in [7, 8, 9, 15, 16, 17, 24] {
            for position in 0..<length {
                for character in odd {
                    for filler in [" ", "a"] {
                        var scalars = Array(repeating: filler, count: length)
                        scalars[position] = character
                        let value = scalars.joined()
                        #expect(
                            IdentifierRule.violation(in: value) == Self.reference(value),
                            "\(value.unicodeScalars.map { String($0.value, radix: 16) })")
                    }
                }
            }
        }
    }

    /// The rule is checked a word at a time, the last partial word as the final eight bytes: every length up to 40,
    /// of visible letters or of spaces, with a control character, DEL, a C1 control, a no-break space or a letter
    /// at every position, gives what the rule says scalar by scalar.
    @Test func everyLengthAndPositionAgreesWithTheRuleScalarByScalar() {
        func reference(_ value: String) -> IdentifierRule.Violation? {
            let scalars = value.unicodeScalars
            if scalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) {
                return .controlCharacter
            }
            return scalars.allSatisfy(\.properties.isWhitespace) ? .blank : nil
        }
        let specials: [Unicode.Scalar] = ["\u{01}", "\u{1F}", "\u{7F}", "\u{85}", "\u{A0}", "\u{E9}", "x", " "]
        for filler: Unicode.Scalar in ["a", " "] {
            for length in 0...40 {
                let plain = String(repeating: Character(filler), count: length)
                #expect(IdentifierRule.violation(in: plain) == reference(plain), "\(length) of \(filler)")
                for position in 0..<length {
                    for special in specials {
                        var scalars = Array(plain.unicodeScalars)
                        scalars[position] = special
                        var value = ""
                        value.unicodeScalars.append(contentsOf: scalars)
                        #expect(
                            IdentifierRule.violation(in: value) == reference(value),
                            "\(special.value) at \(position) of \(length) of \(filler)")
                    }
                }
            }
        }
    }
}
