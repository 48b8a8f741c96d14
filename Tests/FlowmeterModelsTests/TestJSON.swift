import Foundation
import TestSupport

/// A JSON tree for building hostile documents: ordered members (so duplicates survive), raw number literals, and
/// strings whose escaping the writer chooses.
indirect enum TestJSON {
    case object([(String, TestJSON)])
    case array([TestJSON])
    case string(String)
    case number(String)
    case bool(Bool)
    case null

    /// Serializes; with `escapeAll`, every non-ASCII scalar is written as `\u` escapes (surrogate pairs above BMP).
    func bytes(random: inout SeededGenerator, escapeChance: Int = 0) -> [UInt8] {
        var out: [UInt8] = []
        write(to: &out, random: &random, escapeChance: escapeChance)
        return out
    }

    func write(to out: inout [UInt8], random: inout SeededGenerator, escapeChance: Int) {
        switch self {
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (index, (key, value)) in members.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                TestJSON.writeString(key, to: &out, random: &random, escapeChance: escapeChance)
                out.append(UInt8(ascii: ":"))
                value.write(to: &out, random: &random, escapeChance: escapeChance)
            }
            out.append(UInt8(ascii: "}"))
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (index, value) in elements.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                value.write(to: &out, random: &random, escapeChance: escapeChance)
            }
            out.append(UInt8(ascii: "]"))
        case .string(let string):
            TestJSON.writeString(string, to: &out, random: &random, escapeChance: escapeChance)
        case .number(let literal):
            out.append(contentsOf: Array(literal.utf8))
        case .bool(let value):
            out.append(contentsOf: Array((value ? "true" : "false").utf8))
        case .null:
            out.append(contentsOf: Array("null".utf8))
        }
    }

    static func writeString(_ string: String, to out: inout [UInt8], random: inout SeededGenerator, escapeChance: Int) {
        out.append(UInt8(ascii: "\""))
        for scalar in string.unicodeScalars {
            let mustEscape = scalar.value < 0x20 || scalar == "\"" || scalar == "\\"
            if mustEscape || (escapeChance > 0 && random.next(below: 100) < escapeChance) {
                switch scalar {
                case "\"": out.append(contentsOf: Array("\\\"".utf8))
                case "\\": out.append(contentsOf: Array("\\\\".utf8))
                case "\n" where random.next(below: 2) == 0: out.append(contentsOf: Array("\\n".utf8))
                case "/" where random.next(below: 2) == 0: out.append(contentsOf: Array("\\/".utf8))
                default:
                    if scalar.value > 0xFFFF {
                        let value = scalar.value - 0x10000
                        appendEscape(0xD800 + (value >> 10), to: &out)
                        appendEscape(0xDC00 + (value & 0x3FF), to: &out)
                    } else {
                        appendEscape(scalar.value, to: &out)
                    }
                }
            } else {
                out.append(contentsOf: Array(String(scalar).utf8))
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    static func appendEscape(_ unit: UInt32, to out: inout [UInt8]) {
        out.append(contentsOf: Array(String(format: "\\u%04x", unit).utf8))
    }

    /// A copy of the member list with `key` set (replacing every occurrence) or appended.
    var members: [(String, TestJSON)] {
        if case .object(let members) = self { return members }
        return []
    }
}

extension SeededGenerator {
    /// True `percent` times in 100.
    mutating func chance(_ percent: Int) -> Bool { next(below: 100) < percent }
    /// One of `items` (not empty).
    mutating func pick<T>(_ items: [T]) -> T { items[next(below: items.count)] }
}
