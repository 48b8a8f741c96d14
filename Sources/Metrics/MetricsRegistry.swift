import Synchronization

/// The set of metrics one process exposes, rendered in the Prometheus text format 0.0.4 for `GET /metrics`.
///
/// Register families at start-up and keep them; registration takes a lock, increments never do. Registering the
/// same name again with the same type and label names returns the existing family; with anything else, or with an
/// invalid or unprefixed name, it traps: metric names are fixed in code, so that is a programming error.
/// Safe from any thread.
public final class MetricsRegistry: Sendable {
    /// The `Content-Type` for the text `render()` returns.
    public static let contentType = PrometheusText.contentType

    /// The prefix every metric name must begin with (`flowmeter_` for Flowmeter; empty for none).
    public let requiredPrefix: String
    /// The default cap on label combinations per family.
    public let defaultMaxChildren: Int
    private let families = Mutex<[String: any RenderableFamily]>([:])

    /// A registry whose names must start with `requiredPrefix`, capping each family at `defaultMaxChildren`
    /// label combinations unless the family says otherwise.
    public init(requiredPrefix: String = "flowmeter_", defaultMaxChildren: Int = 1_000) {
        precondition(defaultMaxChildren > 0, "defaultMaxChildren must be positive")
        self.requiredPrefix = requiredPrefix
        self.defaultMaxChildren = defaultMaxChildren
    }

    /// Registers (or finds) a counter family; by convention a counter's name ends in `_total`.
    public func counter(
        _ name: String, help: String, labelNames: [String] = [], maxChildren: Int? = nil
    ) -> CounterFamily {
        register(name, labelNames: labelNames) {
            CounterFamily(
                name: name, help: help, labelNames: labelNames, maxChildren: maxChildren ?? defaultMaxChildren)
        }
    }

    /// Registers (or finds) a settable gauge family.
    public func gauge(
        _ name: String, help: String, labelNames: [String] = [], maxChildren: Int? = nil
    ) -> GaugeFamily {
        register(name, labelNames: labelNames) {
            GaugeFamily(
                name: name, help: help, labelNames: labelNames, maxChildren: maxChildren ?? defaultMaxChildren)
        }
    }

    /// Registers an unlabelled gauge whose value `read` returns at each scrape.
    ///
    /// `read` runs on the scraping thread during `render()`: keep it quick and never call the registry from it.
    public func gauge(_ name: String, help: String, reading read: @escaping @Sendable () -> Double) {
        _ = register(name, labelNames: []) { FunctionGauge(name: name, help: help, read: read) }
    }

    /// Registers (or finds) a histogram family with the given bucket upper bounds (ascending; `+Inf` is implied).
    public func histogram(
        _ name: String, help: String, labelNames: [String] = [], buckets: [Double], maxChildren: Int? = nil
    ) -> HistogramFamily {
        precondition(!buckets.isEmpty, "a histogram needs at least one bucket")
        precondition(zip(buckets, buckets.dropFirst()).allSatisfy { $0 < $1 }, "buckets must be strictly ascending")
        precondition(buckets.allSatisfy { $0.isFinite }, "bucket bounds must be finite; +Inf is implied")
        precondition(!labelNames.contains("le"), "'le' is reserved for histogram buckets")
        return register(name, labelNames: labelNames) {
            HistogramFamily(
                name: name, help: help, labelNames: labelNames, upperBounds: buckets,
                maxChildren: maxChildren ?? defaultMaxChildren)
        }
    }

    /// Every metric in the text exposition format 0.0.4, families sorted by name, children by label values.
    public func render() -> String {
        let snapshot = families.withLock { families in families.values.sorted { $0.name < $1.name } }
        var text = ""
        for family in snapshot {
            family.render(into: &text)
        }
        return text
    }

    private func register<Family: RenderableFamily>(
        _ name: String, labelNames: [String], make: () -> Family
    ) -> Family {
        precondition(PrometheusText.isValidMetricName(name), "invalid metric name '\(name)'")
        precondition(name.hasPrefix(requiredPrefix), "metric name '\(name)' must begin with '\(requiredPrefix)'")
        for label in labelNames {
            precondition(PrometheusText.isValidLabelName(label), "invalid label name '\(label)' on '\(name)'")
        }
        precondition(Set(labelNames).count == labelNames.count, "duplicate label names on '\(name)'")
        return families.withLock { families in
            if let existing = families[name] {
                guard let family = existing as? Family, family.labelNames == labelNames else {
                    preconditionFailure("metric '\(name)' is already registered with another type or labels")
                }
                return family
            }
            let family = make()
            families[name] = family
            return family
        }
    }
}
