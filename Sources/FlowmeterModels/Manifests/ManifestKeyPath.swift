/// A data key as a manifest names it: segments joined by dots, `[]` after one that holds an array
/// (`items[].title`, `header.subtitle`, `title`).
///
/// A segment is a JSON object key without `.`, `[` or `]`; a path holds at least one. `a[].b` says: `a` is an array
/// and each of its elements (an object) has `b`. A nested key applies only where its parent is present.
public struct ManifestKeyPath: Hashable, Sendable, CustomStringConvertible {
    /// One step of the path.
    public struct Segment: Hashable, Sendable {
        /// The object key.
        public var name: String
        /// Whether its value is an array whose elements the rest of the path applies to.
        public var isArray: Bool

        /// Creates a segment.
        public init(name: String, isArray: Bool = false) {
            self.name = name
            self.isArray = isArray
        }
    }

    /// The steps, outermost first; never empty.
    public let segments: [Segment]

    /// Parses `text`; nil when it is not a key path (see ``problem(in:)``).
    public init?(_ text: String) {
        guard Self.problem(in: text) == nil else { return nil }
        segments = text.split(separator: ".", omittingEmptySubsequences: false).map { part in
            part.hasSuffix("[]")
                ? Segment(name: String(part.dropLast(2)), isArray: true) : Segment(name: String(part))
        }
    }

    /// Creates a path from segments (at least one).
    public init(segments: [Segment]) {
        precondition(!segments.isEmpty, "a key path has at least one segment")
        self.segments = segments
    }

    /// Why `text` is not a key path, or nil when it is one.
    public static func problem(in text: String) -> String? {
        if text.isEmpty { return "is empty" }
        for part in text.split(separator: ".", omittingEmptySubsequences: false) {
            let name = part.hasSuffix("[]") ? part.dropLast(2) : part[...]
            if name.isEmpty { return "has an empty segment" }
            if name.contains("[") || name.contains("]") { return "has '[' or ']' other than a final '[]' of a segment" }
        }
        return nil
    }

    /// The path as a manifest spells it.
    public var description: String {
        segments.map { $0.isArray ? $0.name + "[]" : $0.name }.joined(separator: ".")
    }

    /// The enclosing path (`items[]` for `items[].title`), nil for a top-level key.
    public var parent: ManifestKeyPath? {
        segments.count > 1 ? ManifestKeyPath(segments: Array(segments.dropLast())) : nil
    }

    /// Whether `self` is `other` or lies inside it (`items[].title` is inside `items[]` and `items`).
    public func isWithin(_ other: ManifestKeyPath) -> Bool {
        guard other.segments.count <= segments.count else { return false }
        for (index, segment) in other.segments.enumerated() {
            let mine = segments[index]
            guard mine.name == segment.name else { return false }
            // `items` (any value) contains `items[]`; `items[]` does not contain a non-array `items`.
            if segment.isArray && !mine.isArray { return false }
        }
        return true
    }
}
