import Collector
import Foundation
import TestSupport
import Testing

/// docs/api.md#ingest's `clientReport`: counted in `/metrics` once per batch, under bounded labels, never a rejection.
@Suite struct ClientReportIngestTests {
    static func batch(id: String, report: String) -> [UInt8] {
        var body = Batches.batch(id: id, events: [Batches.event(id: "\(id)-0")])
        body.removeLast()
        return body + Array(",\(report)}".utf8)
    }

    static func series(_ reason: String) -> String {
        #"flowmeter_client_discarded_events_total{app_id="com.example.shop",reason="\#(reason)"}"#
    }

    @Test func discardedEventsAreCountedOncePerBatchByAppAndReason() async throws {
        let fixture = try CollectorFixture()
        let report =
            #""clientReport":{"discarded":[{"reason":"queue_overflow","events":12},{"reason":"cap_exceeded","events":3},"#
            + #"{"reason":"a_newer_sdk_reason","events":2},{"reason":"x","events":-1},"bogus"]}"#
        let first = try await fixture.post(Self.batch(id: "report-1", report: report))
        #expect(first.status == 202, "\(first.bodyText)")
        #expect(try await fixture.metric(Self.series("queue_overflow")) == 12)
        #expect(try await fixture.metric(Self.series("cap_exceeded")) == 3)
        #expect(try await fixture.metric(Self.series("other")) == 2, "unknown reasons share one label")
        #expect(try await fixture.metric(Self.series("a_newer_sdk_reason")) == nil)

        // A retry of the same batch is answered from memory and counted once.
        let retry = try await fixture.post(Self.batch(id: "report-1", report: report))
        #expect(retry.status == 202)
        #expect(try await fixture.metric(Self.series("queue_overflow")) == 12)

        let second = try await fixture.post(
            Self.batch(
                id: "report-2", report: #""clientReport":{"discarded":[{"reason":"queue_overflow","events":1}]}"#))
        #expect(second.status == 202)
        #expect(try await fixture.metric(Self.series("queue_overflow")) == 13)
        await fixture.shutdown()
    }

    @Test(arguments: [
        #""clientReport":"dropped everything""#, #""clientReport":[1,2]"#, #""clientReport":{"discarded":7}"#,
        #""clientReport":{"discarded":[{"reason":"\u0000","events":5}]}"#, #""clientReport":null"#,
    ])
    func aMalformedReportNeverRejectsTheBatch(report: String) async throws {
        let fixture = try CollectorFixture()
        let answer = try await fixture.post(Self.batch(id: UUID().uuidString, report: report))
        #expect(answer.status == 202, "\(report): \(answer.bodyText)")
        #expect(answer.json["accepted"] as? Int == 1)
        let metrics = try await fixture.get("/metrics").bodyText
        #expect(!metrics.contains("flowmeter_client_discarded_events_total{"), "\(report)")
        await fixture.shutdown()
    }
}
