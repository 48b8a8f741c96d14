/// A histogram with label names: one `Histogram` per distinct combination of label values, all with the same
/// buckets.
///
/// Same resolution rules and cap as `CounterFamily`: resolve once, keep the handle.
public final class HistogramFamily: Sendable {
    /// The metric name; samples are `<name>_bucket`, `<name>_sum` and `<name>_count`.
    public let name: String
    /// The `# HELP` text.
    public let help: String
    /// The bucket upper bounds, ascending, without `+Inf`.
    public let upperBounds: [Double]
    let children: FamilyChildren<Histogram>

    init(name: String, help: String, labelNames: [String], upperBounds: [Double], maxChildren: Int) {
        self.name = name
        self.help = help
        self.upperBounds = upperBounds
        children = FamilyChildren(
            labelNames: labelNames, maxChildren: maxChildren, make: { Histogram(upperBounds: upperBounds) })
    }

    /// The label names, in the order `labels(_:)` takes values.
    public var labelNames: [String] { children.labelNames }

    /// The child for these label values, one per label name in order; traps on a wrong count.
    public func labels(_ values: String...) -> Histogram {
        children.child(values)
    }

    /// The child for these label values, one per label name in order; traps on a wrong count.
    public func labels(_ values: [String]) -> Histogram {
        children.child(values)
    }
}

extension HistogramFamily: RenderableFamily {
    func render(into text: inout String) {
        PrometheusText.header(name: name, help: help, type: "histogram", into: &text)
        let bucketLabelNames = labelNames + ["le"]
        for (values, histogram) in children.snapshot() {
            let counts = histogram.cumulativeCounts
            for (index, count) in counts.enumerated() {
                let bound = index < upperBounds.count ? PrometheusText.format(upperBounds[index]) : "+Inf"
                PrometheusText.sample(
                    name: name + "_bucket", labelNames: bucketLabelNames, values: values + [bound],
                    value: String(count), into: &text)
            }
            PrometheusText.sample(
                name: name + "_sum", labelNames: labelNames, values: values,
                value: PrometheusText.format(histogram.sum), into: &text)
            PrometheusText.sample(
                name: name + "_count", labelNames: labelNames, values: values, value: String(counts.last ?? 0),
                into: &text)
        }
    }
}
