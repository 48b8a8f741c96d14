package import Foundation

/// Finds every widget a Flow-UI page envelope would send, for `flowmeter check`.
///
/// The walk (docs/cli.md, "check"):
/// - The document is an object. When it has a `page` object, that is the page; otherwise the document itself is.
/// - Every object reachable from the page through any key or array is visited: header, sections, widgets, footer,
///   and whatever nests inside them (accordion `children`, `sheet`, `tabs`, `items`, carousels, …), at any depth.
/// - A visited object whose `type` is a non-empty string is a widget, except the page itself and a section (an
///   element of the page's `sections` array that holds a `widgets` array): their `type`, if any, names a layout.
/// - Values under `action`, `actions`, `analytics`, `style` and `tracking` are not walked: their `type`s name actions
///   and styles, which no app registers as widgets.
/// - A widget's content, what its manifest's keys are looked up in (docs/api.md#capability-manifests), is its `data`
///   object when it has one, else the widget object itself without `type`, `id` and the skipped keys.
/// - A section's `arrangement` string names its layout (`vertical`, `grid`, …).
/// Paths are spelled like Flow-UI's coding paths (`page.sections.Index 0.widgets.Index 1`), so they match the
/// `codingPath` of diagnostics.
package enum PageWalker {
    /// One widget occurrence.
    package struct Widget: Hashable, Sendable {
        /// The widget's `type`.
        package var type: String
        /// Where it sits, as a coding path.
        package var path: String
    }

    /// A JSON value reduced to its shape: which keys objects have, and which values are arrays.
    indirect enum Content: Hashable, Sendable {
        case object([String: Content])
        case array([Content])
        case null
        case scalar

        /// The deepest content kept; deeper values count as scalars (manifest keys nest 8 levels at most).
        static let maxDepth = 16

        init(_ value: Any, depth: Int = 0) {
            if value is NSNull {
                self = .null
            } else if depth >= Self.maxDepth {
                self = .scalar
            } else if let object = value as? [String: Any] {
                self = .object(object.mapValues { Content($0, depth: depth + 1) })
            } else if let array = value as? [Any] {
                self = .array(array.map { Content($0, depth: depth + 1) })
            } else {
                self = .scalar
            }
        }
    }

    /// One widget with its content.
    struct Occurrence: Hashable, Sendable {
        var widget: Widget
        /// The keys its manifest's required and optional keys are looked up in.
        var content: Content
        /// Where the content sits: the widget's path, plus `.data` when it has a `data` object.
        var contentPath: String
    }

    /// A section of the page and the arrangement it asks for.
    struct Section: Hashable, Sendable {
        var path: String
        /// Its `arrangement`, when it names one.
        var arrangement: String?
    }

    /// What `check` judges: every widget with its content, and every section.
    struct Page: Hashable, Sendable {
        var occurrences: [Occurrence] = []
        var sections: [Section] = []

        /// The widgets, in document order.
        var widgets: [Widget] { occurrences.map(\.widget) }
    }

    /// Keys whose values hold no widgets.
    static let skippedKeys: Set<String> = ["action", "actions", "analytics", "style", "tracking"]

    /// The deepest nesting walked; deeper input is refused rather than recursed into.
    package static let maxDepth = 256

    /// Why a payload cannot be walked.
    package enum Failure: Error, Equatable {
        case notJSON(String)
        case notAnObject
        case tooDeep
    }

    /// Every widget in `data`, in document order where JSON keeps one (arrays) and by key name within an object.
    package static func widgets(in data: Data) throws(Failure) -> [Widget] {
        try page(in: data).widgets
    }

    /// Every widget in `data` with its content, and every section with its arrangement.
    static func page(in data: Data) throws(Failure) -> Page {
        let document: Any
        do {
            document = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch {
            throw .notJSON((error as NSError).localizedDescription)
        }
        guard let root = document as? [String: Any] else { throw .notAnObject }
        let page = root["page"] as? [String: Any] ?? root
        var found = Page()
        try walkObject(page, path: "page", isPage: true, isSection: false, depth: 0, into: &found)
        return found
    }

    /// The content of a widget object: its `data` object, else its own keys but `type`, `id` and the skipped ones.
    private static func content(of object: [String: Any], path: String) -> (Content, String) {
        if let data = object["data"] as? [String: Any] { return (Content(data), path + ".data") }
        let own = object.filter { $0.key != "type" && $0.key != "id" && !skippedKeys.contains($0.key) }
        return (Content(own), path)
    }

    private static func walk(_ value: Any, path: String, depth: Int, into found: inout Page) throws(Failure) {
        if let object = value as? [String: Any] {
            try walkObject(object, path: path, isPage: false, isSection: false, depth: depth, into: &found)
        } else if let array = value as? [Any] {
            try walkArray(array, path: path, areSections: false, depth: depth, into: &found)
        }
    }

    private static func walkArray(
        _ array: [Any], path: String, areSections: Bool, depth: Int, into found: inout Page
    ) throws(Failure) {
        guard depth < maxDepth else { throw .tooDeep }
        for (index, element) in array.enumerated() {
            let elementPath = "\(path).Index \(index)"
            if areSections, let section = element as? [String: Any], section["widgets"] is [Any] {
                try walkObject(
                    section, path: elementPath, isPage: false, isSection: true, depth: depth + 1, into: &found)
            } else {
                try walk(element, path: elementPath, depth: depth + 1, into: &found)
            }
        }
    }

    private static func walkObject(
        _ object: [String: Any], path: String, isPage: Bool, isSection: Bool, depth: Int, into found: inout Page
    ) throws(Failure) {
        guard depth < maxDepth else { throw .tooDeep }
        if isSection {
            found.sections.append(Section(path: path, arrangement: object["arrangement"] as? String))
        } else if !isPage, let type = object["type"] as? String, !type.isEmpty {
            let (content, contentPath) = content(of: object, path: path)
            found.occurrences.append(
                Occurrence(widget: Widget(type: type, path: path), content: content, contentPath: contentPath))
        }
        for key in object.keys.sorted(by: keyOrder) where key != "type" && !skippedKeys.contains(key) {
            let childPath = "\(path).\(key)"
            if isPage && key == "sections", let sections = object[key] as? [Any] {
                try walkArray(sections, path: childPath, areSections: true, depth: depth + 1, into: &found)
            } else {
                try walk(object[key]!, path: childPath, depth: depth + 1, into: &found)
            }
        }
    }

    /// Page order for the usual keys (header before sections before footer), then by name.
    private static func keyOrder(_ a: String, _ b: String) -> Bool {
        let rank = ["header": 0, "sections": 1, "footer": 2]
        let left = rank[a] ?? 1
        let right = rank[b] ?? 1
        return left != right ? left < right : a < b
    }
}
