/// A counter with label names: one `Counter` per distinct combination of label values.
///
/// Resolve children once and keep them (`requests.labels("POST", "/v1/diagnostics", "202")`); each resolution
/// takes a lock. At most `maxChildren` combinations are kept; later ones share the series whose every label is
/// `__other__`, a last defence against unbounded label values (bound them first with `LabelLimiter`).
public final class CounterFamily: Sendable {
    /// The metric name.
    public let name: String
    /// The `# HELP` text.
    public let help: String
    let children: FamilyChildren<Counter>

    init(name: String, help: String, labelNames: [String], maxChildren: Int) {
        self.name = name
        self.help = help
        children = FamilyChildren(labelNames: labelNames, maxChildren: maxChildren, make: { Counter() })
    }

    /// The label names, in the order `labels(_:)` takes values.
    public var labelNames: [String] { children.labelNames }

    /// The child for these label values, one per label name in order; traps on a wrong count.
    public func labels(_ values: String...) -> Counter {
        children.child(values)
    }

    /// The child for these label values, one per label name in order; traps on a wrong count.
    public func labels(_ values: [String]) -> Counter {
        children.child(values)
    }
}

extension CounterFamily: RenderableFamily {
    func render(into text: inout String) {
        PrometheusText.header(name: name, help: help, type: "counter", into: &text)
        for (values, counter) in children.snapshot() {
            PrometheusText.sample(
                name: name, labelNames: labelNames, values: values, value: String(counter.value), into: &text)
        }
    }
}
