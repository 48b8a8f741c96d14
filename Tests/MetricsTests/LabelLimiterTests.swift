import Dispatch
import Metrics
import Testing

@Suite struct LabelLimiterTests {
    @Test func theValueAfterTheFirstNGoesToOther() {
        let limiter = LabelLimiter(maxValuesPerKind: 3)
        #expect(limiter.admit("title_block", kind: "unknownType") == "title_block")
        #expect(limiter.admit("image_text_card", kind: "unknownType") == "image_text_card")
        #expect(limiter.admit("hologram", kind: "unknownType") == "hologram")
        #expect(limiter.admit("fourth", kind: "unknownType") == LabelLimiter.other)
        #expect(limiter.admit("fifth", kind: "unknownType") == "__other__")
        // Admitted values stay admitted.
        #expect(limiter.admit("title_block", kind: "unknownType") == "title_block")
        #expect(limiter.admittedValues(kind: "unknownType") == ["hologram", "image_text_card", "title_block"])
    }

    @Test func eachKindHasItsOwnSlots() {
        let limiter = LabelLimiter(maxValuesPerKind: 1)
        #expect(limiter.admit("a", kind: "unknownType") == "a")
        #expect(limiter.admit("b", kind: "unknownType") == "__other__")
        #expect(limiter.admit("b", kind: "duplicateID") == "b")
    }

    @Test func kindsPastTheirCapMapEverythingToOther() {
        let limiter = LabelLimiter(maxValuesPerKind: 10, maxKinds: 2)
        #expect(limiter.admit("a", kind: "one") == "a")
        #expect(limiter.admit("a", kind: "two") == "a")
        #expect(limiter.admit("a", kind: "three") == "__other__")
    }

    @Test func aFloodOfRandomTypesAddsBoundedSeries() {
        let limiter = LabelLimiter(maxValuesPerKind: 50)
        let registry = MetricsRegistry()
        let family = registry.counter("flowmeter_events_total", help: "Events.", labelNames: ["kind", "widget_type"])
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for index in 0..<5_000 {
                family.labels("unknownType", limiter.admit("random_\(thread)_\(index)", kind: "unknownType"))
                    .increment()
            }
        }
        let series = registry.render().split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(series.count == 51)
        #expect(limiter.admittedValues(kind: "unknownType").count == 50)
        #expect(family.labels("unknownType", "__other__").value == 20_000 - 50)
    }
}
