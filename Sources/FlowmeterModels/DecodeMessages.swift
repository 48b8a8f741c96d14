/// The exact wording of every decode report, shared by both decode paths so their strings cannot drift.
package enum DecodeMessages {
    package static func missingKey(_ key: String) -> String { "Missing key '\(key)'" }

    package static func typeMismatch(expected: String, key: String?, found: String) -> String {
        if let key { return "Expected \(expected) for '\(key)' but found \(found)" }
        return "Expected \(expected) but found \(found)"
    }

    package static func emptyKind(_ key: String) -> String { "Empty value for '\(key)'" }

    package static func invalidTime(_ value: String, key: String) -> String {
        "Invalid RFC 3339 time '\(FieldLimits.truncate(value, to: FieldLimits.quotedValue))' for '\(key)'"
    }

    package static func invalidCount(_ value: Int, key: String) -> String {
        "Expected a positive count for '\(key)' but found \(value)"
    }

    package static let invalidJSON = "The data is not valid JSON"
}
