// The Codable path's field readers. They never let a raw Foundation error escape: every failure is rethrown as a
// DecodingError whose debugDescription is the contract wording from DecodeMessages, so the fast path can match it.

/// A key for containers whose keys are not known in advance.
struct AnyCodingKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(stringValue: String) { self.stringValue = stringValue }
    init(intValue: Int) {
        self.stringValue = "Index \(intValue)"
        self.intValue = intValue
    }
}

extension KeyedDecodingContainer {
    func missing(_ key: Key) -> DecodingError {
        .keyNotFound(key, .init(codingPath: codingPath, debugDescription: DecodeMessages.missingKey(key.stringValue)))
    }

    func mismatch(_ key: Key, expected: String) -> DecodingError {
        let found = foundType(key)
        return .typeMismatch(
            Any.self,
            .init(
                codingPath: codingPath,
                debugDescription: DecodeMessages.typeMismatch(expected: expected, key: key.stringValue, found: found)
            )
        )
    }

    func invalid(_ message: String) -> DecodingError {
        .dataCorrupted(.init(codingPath: codingPath, debugDescription: message))
    }

    /// The JSON type of the value at `key`, found by probing since Foundation's errors do not say it reliably.
    func foundType(_ key: Key) -> String {
        if (try? decodeNil(forKey: key)) == true { return "null" }
        if (try? decode(Bool.self, forKey: key)) != nil { return "bool" }
        if (try? decode(String.self, forKey: key)) != nil { return "string" }
        if (try? nestedUnkeyedContainer(forKey: key)) != nil { return "array" }
        if (try? nestedContainer(keyedBy: AnyCodingKey.self, forKey: key)) != nil { return "object" }
        return "number"
    }

    /// Whether `key` holds something other than null; a missing required key throws.
    func isPresent(_ key: Key, required: Bool, expected: String) throws -> Bool {
        guard contains(key) else {
            if required { throw missing(key) }
            return false
        }
        if (try? decodeNil(forKey: key)) == true {
            if required { throw mismatch(key, expected: expected) }
            return false
        }
        return true
    }

    func string(_ key: Key, limit: Int = FieldLimits.other) throws -> String? {
        guard try isPresent(key, required: false, expected: "String") else { return nil }
        guard let value = try? decode(String.self, forKey: key) else { throw mismatch(key, expected: "String") }
        return FieldLimits.truncate(value, to: limit)
    }

    func requiredString(_ key: Key, limit: Int = FieldLimits.other) throws -> String {
        _ = try isPresent(key, required: true, expected: "String")
        guard let value = try? decode(String.self, forKey: key) else { throw mismatch(key, expected: "String") }
        return FieldLimits.truncate(value, to: limit)
    }

    /// An optional identifier: a string held to ``IdentifierRule``; a violation names the field in its path.
    func identifier(_ key: Key, limit: Int = FieldLimits.other) throws -> String? {
        guard let value = try string(key, limit: limit) else { return nil }
        return try checkedIdentifier(value, key)
    }

    func requiredIdentifier(_ key: Key, limit: Int = FieldLimits.other) throws -> String {
        try checkedIdentifier(try requiredString(key, limit: limit), key)
    }

    private func checkedIdentifier(_ value: String, _ key: Key) throws -> String {
        guard let violation = IdentifierRule.violation(in: value) else { return value }
        throw DecodingError.dataCorrupted(
            .init(codingPath: codingPath + [key], debugDescription: violation.message(key: key.stringValue)))
    }

    func int(_ key: Key) throws -> Int? {
        guard try isPresent(key, required: false, expected: "Int") else { return nil }
        guard let value = try? decode(Int.self, forKey: key) else { throw mismatch(key, expected: "Int") }
        return value
    }

    func timestamp(_ key: Key, required: Bool) throws -> Timestamp? {
        guard try isPresent(key, required: required, expected: "String") else { return nil }
        guard let value = try? decode(String.self, forKey: key) else { throw mismatch(key, expected: "String") }
        guard let time = Timestamp(rfc3339: value) else {
            throw invalid(DecodeMessages.invalidTime(value, key: key.stringValue))
        }
        return time
    }

    func object<NestedKey: CodingKey>(
        _ key: Key, keyedBy type: NestedKey.Type, required: Bool
    ) throws -> KeyedDecodingContainer<NestedKey>? {
        guard try isPresent(key, required: required, expected: "Object") else { return nil }
        guard let nested = try? nestedContainer(keyedBy: type, forKey: key) else {
            throw mismatch(key, expected: "Object")
        }
        return nested
    }

    func array(_ key: Key, required: Bool) throws -> (any UnkeyedDecodingContainer)? {
        guard try isPresent(key, required: required, expected: "Array") else { return nil }
        guard let nested = try? nestedUnkeyedContainer(forKey: key) else { throw mismatch(key, expected: "Array") }
        return nested
    }
}

/// The JSON type of a single value, found by probing.
func foundType(of decoder: any Decoder) -> String {
    guard let single = try? decoder.singleValueContainer() else { return "object" }
    if single.decodeNil() { return "null" }
    if (try? single.decode(Bool.self)) != nil { return "bool" }
    if (try? single.decode(String.self)) != nil { return "string" }
    if (try? decoder.unkeyedContainer()) != nil { return "array" }
    if (try? decoder.container(keyedBy: AnyCodingKey.self)) != nil { return "object" }
    return "number"
}

/// A coding path in the contract's spelling: keys joined by dots, array positions as `Index N`.
func pathString(_ codingPath: [any CodingKey]) -> String {
    codingPath.map { key in key.intValue.map { "Index \($0)" } ?? key.stringValue }.joined(separator: ".")
}
