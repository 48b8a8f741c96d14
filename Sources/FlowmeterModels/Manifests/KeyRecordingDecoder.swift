import Foundation

/// The keys a content type's `init(from:)` asked for while ``KeyRecordingDecoder`` ran it.
final class KeyRecording {
    var required: Set<String> = []
    var optional: Set<String> = []

    /// The deepest key path learned; deeper containers answer with placeholders and record nothing.
    static let maxDepth = ManifestLimits().maxKeyDepth

    func record(_ path: String, isRequired: Bool) {
        if isRequired { required.insert(path) } else { optional.insert(path) }
    }

    var shape: CapabilityManifest.TypeShape {
        CapabilityManifest.TypeShape(required: Array(required), optional: Array(optional))
    }
}

/// A decoder that answers every `decode` with a placeholder and records which keys were asked for, and how: the
/// engine of ``ManifestBuilder/shape(of:type:)``.
///
/// `decode(_:forKey:)` records a required key, `decodeIfPresent(_:forKey:)` an optional one (descending into it to
/// learn its nested keys, then answering nil). Arrays have one element, so an element's keys are learned under
/// `key[]`. Foundation's leaf types (`URL`, `Date`, `Data`, `Decimal`, `UUID`) are answered whole rather than through
/// their own `Decodable` conformances, whose inner keys no payload spells.
struct KeyRecordingDecoder: Decoder {
    let recording: KeyRecording
    /// The key path of the value being decoded, nil at the content's top level.
    let prefix: String?
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(recording: KeyRecording, prefix: String?, codingPath: [any CodingKey]) {
        self.recording = recording
        self.prefix = prefix
        self.codingPath = codingPath
    }

    var depth: Int { prefix.map { $0.split(separator: ".").count } ?? 0 }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(KeyedRecordingContainer<Key>(decoder: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        UnkeyedRecordingContainer(decoder: self)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleValueRecordingContainer(decoder: self)
    }

    /// The path of `key` under this decoder's prefix.
    func path(_ key: String) -> String {
        prefix.map { "\($0).\(key)" } ?? key
    }

    /// A decoder for a value at `path`.
    func child(prefix: String?, key: any CodingKey) -> KeyRecordingDecoder {
        KeyRecordingDecoder(recording: recording, prefix: prefix, codingPath: codingPath + [key])
    }

    /// A placeholder `T`: a leaf for Foundation's value types, else `T` decoded from `decoder` (a `CaseIterable`
    /// type that refuses the placeholder gets its first case).
    static func placeholder<T: Decodable>(_ type: T.Type, from decoder: KeyRecordingDecoder) throws -> T {
        if let leaf = leaf(type) { return leaf }
        guard decoder.depth <= KeyRecording.maxDepth else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: decoder.codingPath,
                    debugDescription: "Content nests deeper than \(KeyRecording.maxDepth) levels"))
        }
        do {
            return try T(from: decoder)
        } catch {
            if let iterable = type as? any CaseIterable.Type, let first = firstCase(of: iterable) as? T { return first }
            throw error
        }
    }

    private static func firstCase<C: CaseIterable>(of type: C.Type) -> Any? { C.allCases.first }

    private static func leaf<T>(_ type: T.Type) -> T? {
        switch type {
        case is URL.Type: return URL(string: "https://example.invalid/placeholder") as? T
        case is Date.Type: return Date(timeIntervalSince1970: 0) as? T
        case is Data.Type: return Data() as? T
        case is Decimal.Type: return Decimal(1) as? T
        case is UUID.Type: return UUID() as? T
        default: return nil
        }
    }
}

/// A single index key for coding paths.
private struct IndexKey: CodingKey {
    var stringValue: String { "Index \(intValue!)" }
    var intValue: Int?
    init(_ index: Int) { intValue = index }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.intValue = intValue }
}

private struct KeyedRecordingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: KeyRecordingDecoder
    var codingPath: [any CodingKey] { decoder.codingPath }
    var allKeys: [Key] { [] }
    private var isRecording: Bool { decoder.depth < KeyRecording.maxDepth }

    init(decoder: KeyRecordingDecoder) {
        self.decoder = decoder
    }

    func contains(_ key: Key) -> Bool { true }

    func decodeNil(forKey key: Key) throws -> Bool { false }

    private func required<T>(_ key: Key, _ value: T) -> T {
        if isRecording { decoder.recording.record(decoder.path(key.stringValue), isRequired: true) }
        return value
    }

    private func optional<T>(_ key: Key) -> T? {
        if isRecording { decoder.recording.record(decoder.path(key.stringValue), isRequired: false) }
        return nil
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { required(key, false) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { required(key, "placeholder") }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { required(key, 1) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { required(key, 1) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { required(key, 1) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { required(key, 1) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { required(key, 1) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { required(key, 1) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { required(key, 1) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { required(key, 1) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { required(key, 1) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { required(key, 1) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { required(key, 1) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { required(key, 1) }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        let path = decoder.path(key.stringValue)
        if isRecording { decoder.recording.record(path, isRequired: true) }
        return try KeyRecordingDecoder.placeholder(type, from: decoder.child(prefix: path, key: key))
    }

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { optional(key) }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { optional(key) }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { optional(key) }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { optional(key) }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { optional(key) }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { optional(key) }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { optional(key) }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { optional(key) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { optional(key) }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { optional(key) }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { optional(key) }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { optional(key) }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { optional(key) }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { optional(key) }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        let path = decoder.path(key.stringValue)
        guard isRecording else { return nil }
        decoder.recording.record(path, isRequired: false)
        // Learn the nested keys, which apply where this one is present; the content then sees it absent.
        _ = try? KeyRecordingDecoder.placeholder(type, from: decoder.child(prefix: path, key: key))
        return nil
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        let path = decoder.path(key.stringValue)
        if isRecording { decoder.recording.record(path, isRequired: true) }
        return KeyedDecodingContainer(
            KeyedRecordingContainer<NestedKey>(decoder: decoder.child(prefix: path, key: key)))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        let path = decoder.path(key.stringValue)
        if isRecording { decoder.recording.record(path, isRequired: true) }
        return UnkeyedRecordingContainer(decoder: decoder.child(prefix: path, key: key))
    }

    func superDecoder() throws -> any Decoder { decoder }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        decoder.child(prefix: decoder.path(key.stringValue), key: key)
    }
}

/// An array of one element (none past the depth limit), whose elements' keys are learned under `key[]`.
private struct UnkeyedRecordingContainer: UnkeyedDecodingContainer {
    let decoder: KeyRecordingDecoder
    var codingPath: [any CodingKey] { decoder.codingPath }
    var count: Int? { decoder.depth < KeyRecording.maxDepth ? 1 : 0 }
    var isAtEnd: Bool { currentIndex >= count! }
    private(set) var currentIndex = 0

    init(decoder: KeyRecordingDecoder) {
        self.decoder = decoder
    }

    /// The decoder of the current element: keys under `prefix[]`.
    private var element: KeyRecordingDecoder {
        decoder.child(prefix: decoder.prefix.map { $0 + "[]" }, key: IndexKey(currentIndex))
    }

    private mutating func next<T>(_ value: T) throws -> T {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(T.self, .init(codingPath: codingPath, debugDescription: "At the end"))
        }
        currentIndex += 1
        return value
    }

    mutating func decodeNil() throws -> Bool { false }
    mutating func decode(_ type: Bool.Type) throws -> Bool { try next(false) }
    mutating func decode(_ type: String.Type) throws -> String { try next("placeholder") }
    mutating func decode(_ type: Double.Type) throws -> Double { try next(1) }
    mutating func decode(_ type: Float.Type) throws -> Float { try next(1) }
    mutating func decode(_ type: Int.Type) throws -> Int { try next(1) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try next(1) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try next(1) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try next(1) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try next(1) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try next(1) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next(1) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try next(1) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try next(1) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next(1) }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let value = try KeyRecordingDecoder.placeholder(type, from: element)
        return try next(value)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type
    ) throws -> KeyedDecodingContainer<NestedKey> {
        let container = KeyedDecodingContainer(KeyedRecordingContainer<NestedKey>(decoder: element))
        return try next(container)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let container = UnkeyedRecordingContainer(decoder: element)
        return try next(container)
    }

    mutating func superDecoder() throws -> any Decoder {
        let element = self.element
        return try next(element)
    }
}

/// One value: placeholders for primitives, and the value's own decoding for anything else.
private struct SingleValueRecordingContainer: SingleValueDecodingContainer {
    let decoder: KeyRecordingDecoder
    var codingPath: [any CodingKey] { decoder.codingPath }

    func decodeNil() -> Bool { false }
    func decode(_ type: Bool.Type) throws -> Bool { false }
    func decode(_ type: String.Type) throws -> String { "placeholder" }
    func decode(_ type: Double.Type) throws -> Double { 1 }
    func decode(_ type: Float.Type) throws -> Float { 1 }
    func decode(_ type: Int.Type) throws -> Int { 1 }
    func decode(_ type: Int8.Type) throws -> Int8 { 1 }
    func decode(_ type: Int16.Type) throws -> Int16 { 1 }
    func decode(_ type: Int32.Type) throws -> Int32 { 1 }
    func decode(_ type: Int64.Type) throws -> Int64 { 1 }
    func decode(_ type: UInt.Type) throws -> UInt { 1 }
    func decode(_ type: UInt8.Type) throws -> UInt8 { 1 }
    func decode(_ type: UInt16.Type) throws -> UInt16 { 1 }
    func decode(_ type: UInt32.Type) throws -> UInt32 { 1 }
    func decode(_ type: UInt64.Type) throws -> UInt64 { 1 }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try KeyRecordingDecoder.placeholder(type, from: decoder) }
}
