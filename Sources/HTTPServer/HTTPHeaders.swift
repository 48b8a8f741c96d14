/// An ordered list of HTTP header fields with case-insensitive lookup.
///
/// Names keep the spelling they were added with; lookups ignore ASCII case, as HTTP requires.
public struct HTTPHeaders: Sendable, Sequence, ExpressibleByDictionaryLiteral {
    /// The fields in the order they were added.
    public private(set) var fields: [(name: String, value: String)]

    /// Makes an empty list.
    public init() {
        fields = []
    }

    /// Makes a list from fields in order.
    public init(_ fields: [(name: String, value: String)]) {
        self.fields = fields
    }

    /// Makes a list from a literal; duplicates are kept in literal order.
    public init(dictionaryLiteral elements: (String, String)...) {
        fields = elements.map { (name: $0.0, value: $0.1) }
    }

    /// Reserves room for `count` fields, so a known number of adds never reallocates.
    public mutating func reserveCapacity(_ count: Int) {
        fields.reserveCapacity(count)
    }

    /// Appends a field, keeping any existing field of the same name.
    public mutating func add(name: String, value: String) {
        fields.append((name: name, value: value))
    }

    /// Replaces every field of that name (in any case) with one field.
    public mutating func replaceOrAdd(name: String, value: String) {
        fields.removeAll { Self.equalIgnoringASCIICase($0.name, name) }
        fields.append((name: name, value: value))
    }

    /// The value of the first field with that name in any case, or nil.
    public subscript(name: String) -> String? {
        for field in fields where Self.equalIgnoringASCIICase(field.name, name) {
            return field.value
        }
        return nil
    }

    /// Whether a field with that name exists in any case.
    public func contains(_ name: String) -> Bool {
        self[name] != nil
    }

    /// The number of fields.
    public var count: Int { fields.count }

    /// Iterates the fields in order.
    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> {
        fields.makeIterator()
    }

    static func equalIgnoringASCIICase(_ lhs: String, _ rhs: String) -> Bool {
        let left = lhs.utf8
        let right = rhs.utf8
        guard left.count == right.count else { return false }
        for (a, b) in zip(left, right) where a != b {
            // Header names are ASCII tokens, so folding A–Z is all case-insensitivity means here.
            if a | 0x20 != b | 0x20 || !((a | 0x20) >= 0x61 && (a | 0x20) <= 0x7A) {
                return false
            }
        }
        return true
    }
}
