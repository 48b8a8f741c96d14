import Foundation
import Testing

@testable import FlowmeterModels
@testable import FlowmeterWire

/// ByteSink's word-at-a-time escaper against the plain definition (RFC 8259), at every offset around the word
/// boundaries and with specials next to each other, where one special's borrow flags its neighbour.
@Suite struct ByteSinkEscapeTests {
    static func reference(_ value: String) -> [UInt8] {
        var out: [UInt8] = []
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), byte]
            case 0x0A: out += Array(#"\n"#.utf8)
            case 0x0D: out += Array(#"\r"#.utf8)
            case 0x09: out += Array(#"\t"#.utf8)
            case 0..<0x20: out += Array(String(format: "\\u%04x", Int(byte)).utf8)
            default: out.append(byte)
            }
        }
        return out
    }

    static func escaped(_ value: String) -> [UInt8] {
        var memory = [UInt8](repeating: 0, count: ByteSink.maxQuotedLength(value))
        let length = memory.withUnsafeMutableBufferPointer { buffer in
            var sink = ByteSink(buffer.baseAddress!)
            sink.escaped(value)
            return sink.position
        }
        return Array(memory[..<length])
    }

    @Test func everyOffsetOfEverySpecialMatchesTheDefinition() {
        let specials = ["\u{0}", "\u{1}", "\u{1F}", "\"", "\\", "\n", "\u{7F}", "é", "€"]
        for length in 1...26 {
            for position in 0..<length {
                for special in specials {
                    for neighbour in ["a", "\u{1}", "!"] {
                        var characters = Array(repeating: "a", count: length)
                        characters[position] = special
                        if position + 1 < length { characters[position + 1] = neighbour }
                        let value = characters.joined()
                        #expect(Self.escaped(value) == Self.reference(value), "\(Array(value.utf8))")
                    }
                }
            }
        }
    }

    @Test func plainTextIsCopiedAsItIs() {
        for length in 0...40 {
            let value = String(repeating: "x", count: length)
            #expect(Self.escaped(value) == Array(value.utf8))
        }
    }
}
