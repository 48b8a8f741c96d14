/// A gauge with label names: one `Gauge` per distinct combination of label values.
///
/// Same resolution rules and cap as `CounterFamily`: resolve once, keep the handle.
public final class GaugeFamily: Sendable {
    /// The metric name.
    public let name: String
    /// The `# HELP` text.
    public let help: String
    let children: FamilyChildren<Gauge>

    init(name: String, help: String, labelNames: [String], maxChildren: Int) {
        self.name = name
        self.help = help
        children = FamilyChildren(labelNames: labelNames, maxChildren: maxChildren, make: { Gauge() })
    }

    /// The label names, in the order `labels(_:)` takes values.
    public var labelNames: [String] { children.labelNames }

    /// The child for these label values, one per label name in order; traps on a wrong count.
    public func labels(_ values: String...) -> Gauge {
        children.child(values)
    }

    /// The child for these label values, one per label name in order; traps on a wrong count.
    public func labels(_ values: [String]) -> Gauge {
        children.child(values)
    }
}

extension GaugeFamily: RenderableFamily {
    func render(into text: inout String) {
        PrometheusText.header(name: name, help: help, type: "gauge", into: &text)
        for (values, gauge) in children.snapshot() {
            PrometheusText.sample(
                name: name, labelNames: labelNames, values: values, value: PrometheusText.format(gauge.value),
                into: &text)
        }
    }
}
