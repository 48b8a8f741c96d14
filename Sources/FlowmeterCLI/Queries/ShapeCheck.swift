import FlowmeterModels

/// Which manifest keys a widget's content lacks, and which of its keys no manifest names: the shape half of
/// `flowmeter check` (docs/manifests.md).
///
/// A required key is looked up where its parent is present: `title` in the content, `header.title` in the content's
/// `header` object when there is one, `items[].title` in every element of `items` when it is an array. An absent key
/// or a `null` is missing (Flow-UI's `decode` fails on both); a value of another JSON type is not judged here.
enum ShapeCheck {
    /// A required key absent from one object.
    struct Missing: Hashable, Sendable {
        /// The key as the manifest spells it (`items[].title`).
        var key: String
        /// The coding path of the object that lacks it.
        var path: String
    }

    /// Every place `content` (at coding path `path`) lacks one of `required`.
    static func missing(_ required: [String], in content: PageWalker.Content, at path: String) -> [Missing] {
        var found: [Missing] = []
        for key in required {
            guard let parsed = ManifestKeyPath(key) else { continue }
            look(for: parsed.segments[...], key: key, in: content, at: path, into: &found)
        }
        return found
    }

    private static func look(
        for segments: ArraySlice<ManifestKeyPath.Segment>, key: String, in content: PageWalker.Content, at path: String,
        into found: inout [Missing]
    ) {
        guard let segment = segments.first, case .object(let object) = content else { return }
        let rest = segments.dropFirst()
        guard let child = object[segment.name], child != .null else {
            // An absent parent is the parent's own key to require; what lies inside applies only where it is.
            if rest.isEmpty { found.append(Missing(key: key, path: path)) }
            return
        }
        guard !rest.isEmpty else { return }
        let childPath = "\(path).\(segment.name)"
        if segment.isArray {
            guard case .array(let elements) = child else { return }
            for (index, element) in elements.enumerated() {
                look(for: rest, key: key, in: element, at: "\(childPath).Index \(index)", into: &found)
            }
        } else {
            look(for: rest, key: key, in: child, at: childPath, into: &found)
        }
    }

    /// The keys of `content` that none of `known` names, as key paths (`kicker`, `items[].badge`); a key is named when
    /// some known key is it or lies inside it. Only keys whose parent is named are looked into, so the contents of a
    /// key the manifests list without its inner keys are never additive.
    static func additive(in content: PageWalker.Content, known: Set<String>) -> [String] {
        let paths = known.compactMap(ManifestKeyPath.init).map { $0.segments.map(\.name) }
        var found: Set<String> = []
        collect(content, prefix: [], spelled: "", known: paths, into: &found)
        return found.sorted()
    }

    private static func collect(
        _ content: PageWalker.Content, prefix: [String], spelled: String, known: [[String]],
        into found: inout Set<String>
    ) {
        guard case .object(let object) = content else { return }
        for (key, value) in object {
            let names = prefix + [key]
            let isArray = if case .array = value { true } else { false }
            let path = (spelled.isEmpty ? "" : spelled + ".") + key + (isArray ? "[]" : "")
            let related = known.filter { $0.starts(with: names) }
            guard !related.isEmpty else {
                found.insert(path)
                continue
            }
            // Only where the manifests name keys inside this one.
            guard related.contains(where: { $0.count > names.count }) else { continue }
            switch value {
            case .object:
                collect(value, prefix: names, spelled: path, known: known, into: &found)
            case .array(let elements):
                for element in elements { collect(element, prefix: names, spelled: path, known: known, into: &found) }
            default:
                break
            }
        }
    }
}
