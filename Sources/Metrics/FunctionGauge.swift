/// A gauge read at scrape time by calling a closure, such as a closure returning Kafka's queue depth.
///
/// The closure runs on the scraping thread while `MetricsRegistry.render()` runs, once per scrape; it must be
/// quick and must not call back into the registry.
final class FunctionGauge: Sendable {
    let name: String
    let help: String
    private let read: @Sendable () -> Double

    init(name: String, help: String, read: @escaping @Sendable () -> Double) {
        self.name = name
        self.help = help
        self.read = read
    }
}

extension FunctionGauge: RenderableFamily {
    var labelNames: [String] { [] }

    func render(into text: inout String) {
        PrometheusText.header(name: name, help: help, type: "gauge", into: &text)
        PrometheusText.sample(name: name, labelNames: [], values: [], value: PrometheusText.format(read()), into: &text)
    }
}
