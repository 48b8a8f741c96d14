import FlowmeterCLI
import Foundation

/// `flowmeter check`'s payload walker (`PageWalker`) on hostile page payloads.
///
/// Invariants:
/// - Walking never crashes, however deep or odd the JSON; a payload is refused (not JSON, not an object, too deep)
///   or walked, the same way every time.
/// - A payload `JSONSerialization` cannot read is refused as not JSON, and only such a payload.
/// - Every widget found has a non-empty type, and its path leads, through the document's objects and arrays, to an
///   object whose `type` is that string (the path is the widget's real coding path).
package enum PageWalkerFuzzTarget: FuzzTarget {
    package static let name = "page-walker"

    package static func check(_ input: [UInt8]) throws(FuzzFailure) {
        let data = Data(input)
        let first = Result { () throws(PageWalker.Failure) in try PageWalker.widgets(in: data) }
        let second = Result { () throws(PageWalker.Failure) in try PageWalker.widgets(in: data) }
        try require(first == second, "two walks of the same payload differ")
        let document = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        switch first {
        case .failure(.notJSON):
            try require(document == nil, "a payload JSONSerialization reads was refused as not JSON")
        case .failure(.notAnObject):
            try require(
                document != nil && !(document is [String: Any]), "an object payload was refused as not an object")
        case .failure(.tooDeep):
            try require(document != nil, "a payload that is not JSON was refused as too deep")
        case .success(let widgets):
            guard let root = document as? [String: Any] else {
                throw FuzzFailure("a payload that is not a JSON object was walked")
            }
            let page: Any = root["page"] as? [String: Any] ?? root
            for widget in widgets {
                try require(!widget.type.isEmpty, "a widget with an empty type at \(widget.path)")
                let path = Array(widget.path.utf8)
                try require(
                    path == Array("page".utf8) || path.starts(with: "page.".utf8),
                    "a widget path \(widget.path) outside page")
                try require(
                    leadsToWidget(page, path: path.dropFirst(4), type: widget.type, depth: 0),
                    "the path \(widget.path) does not lead to an object of type \(widget.type)")
            }
        }
    }

    /// Whether some reading of `path` (keys may themselves hold dots, or be empty) leads from `value` to an object
    /// whose `type` is `type`. `path` is empty (here) or `.` and a key or `Index n`, then the rest; compared as UTF-8
    /// bytes, since a path joins keys that may start with combining marks.
    private static func leadsToWidget(_ value: Any, path: ArraySlice<UInt8>, type: String, depth: Int) -> Bool {
        guard depth <= PageWalker.maxDepth + 1 else { return false }
        if path.isEmpty {
            return (value as? [String: Any])?["type"] as? String == type
        }
        guard path.first == UInt8(ascii: ".") else { return false }
        let segments = path.dropFirst()
        /// The path after `segment`, or nil when the path does not go on with `segment`.
        func after(_ segment: some Collection<UInt8>) -> ArraySlice<UInt8>? {
            guard segments.starts(with: segment) else { return nil }
            let rest = segments.dropFirst(segment.count)
            return rest.isEmpty || rest.first == UInt8(ascii: ".") ? rest : nil
        }
        if let array = value as? [Any] {
            for (index, element) in array.enumerated() {
                if let rest = after("Index \(index)".utf8),
                    leadsToWidget(element, path: rest, type: type, depth: depth + 1)
                {
                    return true
                }
            }
            return false
        }
        guard let object = value as? [String: Any] else { return false }
        for (key, child) in object {
            if let rest = after(key.utf8), leadsToWidget(child, path: rest, type: type, depth: depth + 1) {
                return true
            }
        }
        return false
    }
}
