import Synchronization

/// The children of one family, keyed by label values, with the cap that bounds a family's series.
///
/// Resolving a child takes the lock and a dictionary lookup; that is why callers keep the handles.
final class FamilyChildren<Child: AnyObject & Sendable>: Sendable {
    let labelNames: [String]
    let maxChildren: Int
    private let make: @Sendable () -> Child
    private let state = Mutex<State>(State())

    private struct State: ~Copyable {
        var children: [[String]: Child] = [:]
        var overflow: Child?
    }

    init(labelNames: [String], maxChildren: Int, make: @escaping @Sendable () -> Child) {
        self.labelNames = labelNames
        self.maxChildren = maxChildren
        self.make = make
    }

    func child(_ values: [String]) -> Child {
        precondition(
            values.count == labelNames.count,
            "expected \(labelNames.count) label values (\(labelNames)), got \(values.count)")
        return state.withLock { state in
            if let child = state.children[values] { return child }
            if state.children.count < maxChildren {
                let child = make()
                state.children[values] = child
                return child
            }
            // Past the cap every new combination shares one series whose labels all read __other__.
            if let overflow = state.overflow { return overflow }
            let overflow = state.children[overflowValues] ?? make()
            state.overflow = overflow
            state.children[overflowValues] = overflow
            return overflow
        }
    }

    private var overflowValues: [String] { labelNames.map { _ in LabelLimiter.other } }

    /// A snapshot of the children sorted by label values, for rendering outside the lock.
    func snapshot() -> [(values: [String], child: Child)] {
        let pairs = state.withLock { state in state.children.map { (values: $0.key, child: $0.value) } }
        return pairs.sorted { $0.values.lexicographicallyPrecedes($1.values) }
    }
}
