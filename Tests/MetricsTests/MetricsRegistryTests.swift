import Dispatch
import Metrics
import Testing

@Suite struct MetricsRegistryTests {
    @Test func rendersASmallRegistryExactly() {
        let registry = MetricsRegistry()
        let requests = registry.counter(
            "flowmeter_http_requests_total", help: "HTTP requests answered.",
            labelNames: ["method", "route", "status"])
        requests.labels("POST", "/v1/diagnostics", "202").increment(by: 3)
        requests.labels("GET", "/metrics", "200").increment()
        registry.gauge("flowmeter_spool_bytes", help: "Bytes in the disk spool.").labels().set(1536)
        registry.gauge("flowmeter_kafka_queue_messages", help: "Messages in librdkafka's queue.", reading: { 42 })
        let latency = registry.histogram(
            "flowmeter_ingest_seconds", help: "Ingest latency.", labelNames: ["route"], buckets: [0.005, 0.1, 1])
        let ingest = latency.labels("/v1/diagnostics")
        for value in [0.00390625, 0.0625, 0.0625, 2] { ingest.observe(value) }

        #expect(
            registry.render() == """
                # HELP flowmeter_http_requests_total HTTP requests answered.
                # TYPE flowmeter_http_requests_total counter
                flowmeter_http_requests_total{method="GET",route="/metrics",status="200"} 1
                flowmeter_http_requests_total{method="POST",route="/v1/diagnostics",status="202"} 3
                # HELP flowmeter_ingest_seconds Ingest latency.
                # TYPE flowmeter_ingest_seconds histogram
                flowmeter_ingest_seconds_bucket{route="/v1/diagnostics",le="0.005"} 1
                flowmeter_ingest_seconds_bucket{route="/v1/diagnostics",le="0.1"} 3
                flowmeter_ingest_seconds_bucket{route="/v1/diagnostics",le="1"} 3
                flowmeter_ingest_seconds_bucket{route="/v1/diagnostics",le="+Inf"} 4
                flowmeter_ingest_seconds_sum{route="/v1/diagnostics"} 2.12890625
                flowmeter_ingest_seconds_count{route="/v1/diagnostics"} 4
                # HELP flowmeter_kafka_queue_messages Messages in librdkafka's queue.
                # TYPE flowmeter_kafka_queue_messages gauge
                flowmeter_kafka_queue_messages 42
                # HELP flowmeter_spool_bytes Bytes in the disk spool.
                # TYPE flowmeter_spool_bytes gauge
                flowmeter_spool_bytes 1536

                """)
    }

    @Test func escapesLabelValuesAndHelp() {
        let registry = MetricsRegistry()
        let family = registry.counter(
            "flowmeter_escapes_total", help: "Back\\slash and\nnewline \"quotes\" stay.", labelNames: ["value"])
        family.labels("a\\b\"c\nd").increment()
        #expect(
            registry.render() == """
                # HELP flowmeter_escapes_total Back\\\\slash and\\nnewline "quotes" stay.
                # TYPE flowmeter_escapes_total counter
                flowmeter_escapes_total{value="a\\\\b\\"c\\nd"} 1

                """)
    }

    @Test func aCarriageReturnLineFeedInALabelValueCannotStartAForgedSample() {
        let registry = MetricsRegistry()
        let family = registry.counter("flowmeter_types_total", help: "Types.", labelNames: ["widget_type"])
        family.labels("x\r\nflowmeter_forged_total 1e9\r\n").increment()
        let text = registry.render()
        // By bytes: "\r\n" is a single Character, which Character-based searches would not see as a line feed.
        let lines = text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        #expect(lines.count == 4)
        #expect(text.contains(#"flowmeter_types_total{widget_type="x\#r\nflowmeter_forged_total 1e9\#r\n"} 1"#))
    }

    @Test func histogramBucketsAreCumulative() {
        let registry = MetricsRegistry()
        let histogram = registry.histogram("flowmeter_sizes", help: "Sizes.", buckets: [1, 10, 100]).labels()
        for value in [0.5, 1, 5, 10, 50, 100, 1000, 5000] { histogram.observe(value) }
        #expect(histogram.cumulativeCounts == [2, 4, 6, 8])
        #expect(histogram.count == 8)
        #expect(histogram.sum == 6166.5)
        histogram.observe(Duration.milliseconds(1500))
        #expect(histogram.cumulativeCounts == [2, 5, 7, 9])
        histogram.observe(nanoseconds: 2_500_000_000)
        histogram.observe(nanoseconds: 999_999_999)
        #expect(histogram.cumulativeCounts == [3, 7, 9, 11])
        #expect(abs(histogram.sum - (6166.5 + 1.5 + 2.5 + 0.999999999)) < 1e-9)
    }

    @Test func gaugesSetAndMoveBothWays() {
        let gauge = MetricsRegistry().gauge("flowmeter_level", help: "Level.").labels()
        gauge.set(10)
        gauge.increment(by: 2.5)
        gauge.decrement()
        #expect(gauge.value == 11.5)
    }

    @Test func functionGaugesAreReadAtEachScrape() {
        let registry = MetricsRegistry()
        let depth = TestBox()
        registry.gauge("flowmeter_queue_depth", help: "Depth.", reading: { Double(depth.value) })
        depth.value = 7
        #expect(registry.render().contains("flowmeter_queue_depth 7\n"))
        depth.value = 9
        #expect(registry.render().contains("flowmeter_queue_depth 9\n"))
    }

    @Test func numbersRenderAsPrometheusParsesThem() {
        let registry = MetricsRegistry()
        let family = registry.gauge("flowmeter_values", help: "Values.", labelNames: ["case"])
        family.labels("inf").set(.infinity)
        family.labels("minus_inf").set(-.infinity)
        family.labels("nan").set(.nan)
        family.labels("fraction").set(0.25)
        family.labels("negative").set(-3)
        let text = registry.render()
        #expect(text.contains("flowmeter_values{case=\"inf\"} +Inf\n"))
        #expect(text.contains("flowmeter_values{case=\"minus_inf\"} -Inf\n"))
        #expect(text.contains("flowmeter_values{case=\"nan\"} NaN\n"))
        #expect(text.contains("flowmeter_values{case=\"fraction\"} 0.25\n"))
        #expect(text.contains("flowmeter_values{case=\"negative\"} -3\n"))
    }

    @Test func resolvingTheSameLabelsGivesTheSameHandle() {
        let registry = MetricsRegistry()
        let family = registry.counter("flowmeter_same_total", help: "Same.", labelNames: ["a"])
        #expect(family.labels("x") === family.labels("x"))
        #expect(family.labels("x") !== family.labels("y"))
        // Registering again finds the same family.
        #expect(registry.counter("flowmeter_same_total", help: "Same.", labelNames: ["a"]) === family)
    }

    @Test func familiesPastTheirCapShareTheOtherSeries() {
        let registry = MetricsRegistry()
        let family = registry.counter(
            "flowmeter_capped_total", help: "Capped.", labelNames: ["kind", "type"], maxChildren: 2)
        family.labels("k", "a").increment()
        family.labels("k", "b").increment()
        family.labels("k", "c").increment()
        family.labels("k", "d").increment()
        #expect(family.labels("k", "c") === family.labels("k", "d"))
        #expect(family.labels("k", "a") !== family.labels("k", "c"))
        let text = registry.render()
        #expect(text.contains("flowmeter_capped_total{kind=\"__other__\",type=\"__other__\"} 2\n"))
        #expect(!text.contains("type=\"c\""))
    }

    @Test func concurrentIncrementsSumExactly() {
        let registry = MetricsRegistry()
        let family = registry.counter("flowmeter_concurrent_total", help: "Concurrent.", labelNames: ["route"])
        let gauge = registry.gauge("flowmeter_concurrent_level", help: "Level.").labels()
        let histogram = registry.histogram("flowmeter_concurrent_seconds", help: "Seconds.", buckets: [0.5]).labels()
        let threads = 8
        let perThread = 50_000
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            // Each thread resolves its own handle, as a request handler would, then increments without lookups.
            let counter = family.labels("/v1/diagnostics")
            for index in 0..<perThread {
                counter.increment()
                gauge.increment()
                histogram.observe(index.isMultiple(of: 2) ? 0.25 : 1)
                if thread == 0 && index.isMultiple(of: 1_000) { _ = registry.render() }
            }
        }
        #expect(family.labels("/v1/diagnostics").value == UInt64(threads * perThread))
        #expect(gauge.value == Double(threads * perThread))
        #expect(histogram.cumulativeCounts == [UInt64(threads * perThread / 2), UInt64(threads * perThread)])
        #expect(histogram.sum == Double(threads * perThread / 2) * 1.25)
    }

    @Test func renderedTextParsesLineByLine() throws {
        let registry = MetricsRegistry()
        let family = registry.counter("flowmeter_parsed_total", help: "Parsed.", labelNames: ["kind", "type"])
        let awkward = ["plain", "with space", "quote\"d", "back\\slash", "new\nline", "ünïcödé", "", "a,b=c}"]
        for (index, value) in awkward.enumerated() {
            family.labels("unknownType", value).increment(by: UInt64(index + 1))
        }
        registry.histogram("flowmeter_parsed_seconds", help: "Seconds.", labelNames: ["route"], buckets: [0.1, 1])
            .labels("/v1/diagnostics").observe(0.5)
        registry.gauge("flowmeter_parsed_ratio", help: "Ratio.", reading: { 0.75 })

        let exposition = try ExpositionParser.parse(registry.render())
        #expect(
            exposition.types == [
                "flowmeter_parsed_total": "counter", "flowmeter_parsed_seconds": "histogram",
                "flowmeter_parsed_ratio": "gauge",
            ])
        for (index, value) in awkward.enumerated() {
            let sample = exposition.samples.first {
                $0.name == "flowmeter_parsed_total" && $0.labels["type"] == value
            }
            #expect(sample?.value == Double(index + 1), "type \(value.debugDescription)")
            #expect(sample?.labels["kind"] == "unknownType")
        }
        #expect(
            exposition.samples.contains { $0.name == "flowmeter_parsed_seconds_bucket" && $0.labels["le"] == "+Inf" })
        #expect(exposition.samples.contains { $0.name == "flowmeter_parsed_ratio" && $0.value == 0.75 })
        // Every sample belongs to a declared family.
        for sample in exposition.samples {
            let family = ["_bucket", "_sum", "_count"].reduce(sample.name) { name, suffix in
                exposition.types[name] == nil && name.hasSuffix(suffix) ? String(name.dropLast(suffix.count)) : name
            }
            #expect(exposition.types[family] != nil, "\(sample.name) has no # TYPE")
        }
    }

    @Test func anUnprefixedNameTraps() async {
        await #expect(processExitsWith: .failure) {
            _ = MetricsRegistry().counter("requests_total", help: "Not ours.")
        }
    }

    @Test func aConflictingRegistrationTraps() async {
        await #expect(processExitsWith: .failure) {
            let registry = MetricsRegistry()
            _ = registry.counter("flowmeter_x_total", help: "X.")
            _ = registry.gauge("flowmeter_x_total", help: "X.")
        }
    }
}

/// A mutable box for the function-gauge test; unchecked because the test reads and writes on one thread.
final class TestBox: @unchecked Sendable {
    var value = 0
}
