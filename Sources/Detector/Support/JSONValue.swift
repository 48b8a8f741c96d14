import FlowmeterModels
import FlowmeterWire

/// A JSON value whose objects keep their keys in the order they were built.
///
/// Report types render through it so the CLI's JSON shows keys in docs/api.md#query-output's order and writes absent
/// values as `null` rather than leaving the key out, which `JSONEncoder` does not promise.
public enum JSONValue: Hashable, Sendable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// An integer, written without a fraction.
    case integer(Int64)
    /// A number; a non-finite value is written as `null`, since JSON has no spelling for it.
    case number(Double)
    /// A string, escaped as RFC 8259 requires.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object; keys appear in this order.
    case object([(key: String, value: JSONValue)])

    /// Compares values; objects are equal when their key/value pairs are equal in the same order.
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.integer(let a), .integer(let b)): return a == b
        case (.number(let a), .number(let b)): return a == b
        case (.string(let a), .string(let b)): return a == b
        case (.array(let a), .array(let b)): return a == b
        case (.object(let a), .object(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: return false
        }
    }

    /// Hashes the value consistently with `==`.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(serialized())
    }

    /// The JSON text: compact on one line, or indented by two spaces with one key per line.
    public func serialized(prettyPrinted: Bool = false) -> String {
        var output = ""
        write(to: &output, indent: prettyPrinted ? 0 : nil)
        return output
    }

    private func write(to output: inout String, indent: Int?) {
        switch self {
        case .null:
            output += "null"
        case .bool(let value):
            output += value ? "true" : "false"
        case .integer(let value):
            output += String(value)
        case .number(let value):
            output += value.isFinite ? Self.format(value) : "null"
        case .string(let value):
            Self.writeString(value, to: &output)
        case .array(let values):
            guard !values.isEmpty else {
                output += "[]"
                return
            }
            output += "["
            for (index, value) in values.enumerated() {
                if index > 0 { output += "," }
                Self.newline(&output, indent.map { $0 + 1 })
                value.write(to: &output, indent: indent.map { $0 + 1 })
            }
            Self.newline(&output, indent)
            output += "]"
        case .object(let members):
            guard !members.isEmpty else {
                output += "{}"
                return
            }
            output += "{"
            for (index, member) in members.enumerated() {
                if index > 0 { output += "," }
                Self.newline(&output, indent.map { $0 + 1 })
                Self.writeString(member.key, to: &output)
                output += indent == nil ? ":" : ": "
                member.value.write(to: &output, indent: indent.map { $0 + 1 })
            }
            Self.newline(&output, indent)
            output += "}"
        }
    }

    private static func newline(_ output: inout String, _ indent: Int?) {
        guard let indent else { return }
        output += "\n"
        output += String(repeating: "  ", count: indent)
    }

    // Integral values print without ".0" so counts that pass through a Double still read as counts.
    private static func format(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }

    private static func writeString(_ string: String, to output: inout String) {
        // Display-safe: JSON printed to a terminal cannot carry an escape sequence from an app's string.
        output += JSONString.quoted(string, displaySafe: true)
    }
}

extension JSONValue: Encodable {
    /// Encodes through any `Encoder`; object key order then depends on that encoder.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var container = encoder.singleValueContainer()
            try container.encodeNil()
        case .bool(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .integer(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .number(let value):
            var container = encoder.singleValueContainer()
            if value.isFinite { try container.encode(value) } else { try container.encodeNil() }
        case .string(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .array(let values):
            var container = encoder.unkeyedContainer()
            for value in values { try container.encode(value) }
        case .object(let members):
            var container = encoder.container(keyedBy: JSONKey.self)
            for member in members { try container.encode(member.value, forKey: JSONKey(member.key)) }
        }
    }
}

/// A coding key for any string.
struct JSONKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }

    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// A value that renders itself as contract-ordered JSON.
public protocol JSONRepresentable {
    /// The value as JSON, keys in the documented order and absent values as `null`.
    var jsonValue: JSONValue { get }
}

extension JSONRepresentable {
    /// The JSON text of `jsonValue`.
    public func jsonString(prettyPrinted: Bool = false) -> String {
        jsonValue.serialized(prettyPrinted: prettyPrinted)
    }
}
