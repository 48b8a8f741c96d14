import Collector
import Foundation
import Gzip
import TestSupport
import Testing

/// docs/api.md#ingest's status table, case by case, in `--kafka none` mode.
@Suite struct IngestStatusTests {
    @Test func aGoodBatchIsAccepted() async throws {
        let fixture = try CollectorFixture()
        let response = try await fixture.post(Batches.good(events: 3))
        #expect(response.status == 202)
        #expect(response.json["accepted"] as? Int == 3)
        #expect(response.json["dropped"] as? Int == 0)
        #expect((response.json["diagnostics"] as? [Any])?.isEmpty == true)
        #expect(response.header("Cache-Control") == "no-store")
        #expect(response.header("X-Content-Type-Options") == "nosniff")
        await fixture.shutdown()
    }

    @Test func threeBrokenEventsOfFiveAreDroppedWithAPathEach() async throws {
        let fixture = try CollectorFixture()
        let time = Batches.now(offset: -1)
        let body = Batches.batch(events: [
            Batches.event(), #"{"occurredAt":"\#(time)"}"#, #"{"kind":7,"occurredAt":"\#(time)"}"#,
            #"{"kind":"droppedElement","occurredAt":"yesterday"}"#, Batches.event(kind: "duplicateID"),
        ])
        let response = try await fixture.post(body)
        #expect(response.status == 202)
        #expect(response.json["accepted"] as? Int == 2)
        #expect(response.json["dropped"] as? Int == 3)
        let diagnostics = try #require(response.json["diagnostics"] as? [[String: String]])
        #expect(diagnostics.map { $0["path"] } == ["events.Index 1", "events.Index 2", "events.Index 3"])
        #expect(diagnostics.allSatisfy { $0["kind"] == "malformedPayload" && !($0["message"] ?? "").isEmpty })
        #expect(diagnostics[0]["message"] == "Missing key 'kind'")
        #expect(
            try await fixture.metric(#"flowmeter_events_total{kind="__undecoded__",outcome="dropped_malformed"}"#) == 3)
        await fixture.shutdown()
    }

    @Test func acceptedEventsAreCountedPerKindAcrossBatches() async throws {
        let fixture = try CollectorFixture()
        for round in 1...2 {
            // A new batch id each round: the same id again would be answered from memory, counting nothing.
            let body = Batches.batch(events: [
                Batches.event(), Batches.event(kind: "duplicateID"), Batches.event(), Batches.event(kind: "newerKind"),
                Batches.event(),
            ])
            #expect(try await fixture.post(body).status == 202)
            let accepted = #"flowmeter_events_total{kind="unknownType",outcome="accepted"}"#
            #expect(try await fixture.metric(accepted) == Double(3 * round))
            let duplicate = #"flowmeter_events_total{kind="duplicateID",outcome="accepted"}"#
            #expect(try await fixture.metric(duplicate) == Double(round))
            let newer = #"flowmeter_events_total{kind="newerKind",outcome="accepted"}"#
            #expect(try await fixture.metric(newer) == Double(round))
            // Each kind's unavailable series is there from its first batch, at 0 until a batch gets 503.
            let unavailable = #"flowmeter_events_total{kind="duplicateID",outcome="unavailable"}"#
            #expect(try await fixture.metric(unavailable) == 0)
        }
        await fixture.shutdown()
    }

    @Test func notJSONIs400WithAPath() async throws {
        let fixture = try CollectorFixture()
        let response = try await fixture.post(Array(#"{"client": "#.utf8))
        #expect(response.status == 400)
        #expect(response.json["error"] as? String == "invalid_json")
        #expect(response.json["message"] is String)
        #expect(response.json["path"] is String)
        let missing = try await fixture.post(Array(#"{"client":{"appID":"com.example.shop"},"events":[]}"#.utf8))
        #expect(missing.status == 400)
        #expect(missing.json["path"] as? String == "client")
        await fixture.shutdown()
    }

    @Test(arguments: [nil, "not-a-key", "key-shop-0123456789x"])
    func aMissingOrUnknownKeyIs401(key: String?) async throws {
        let fixture = try CollectorFixture()
        let response = try await fixture.post(Batches.good(), key: key)
        #expect(response.status == 401)
        #expect(response.json["error"] as? String == "unauthorized")
        await fixture.shutdown()
    }

    @Test func aKeyInTheQueryStringIsIgnored() async throws {
        let fixture = try CollectorFixture()
        let response = try await fixture.post(
            Batches.good(), key: nil, path: "/v1/diagnostics?key=\(CollectorFixture.shopKey)")
        #expect(response.status == 401)
        await fixture.shutdown()
    }

    @Test func aKeyForAnotherAppIs403() async throws {
        let fixture = try CollectorFixture()
        let response = try await fixture.post(Batches.good(), key: CollectorFixture.otherKey)
        #expect(response.status == 403)
        #expect(response.json["error"] as? String == "forbidden")
        #expect(try await fixture.post(Batches.good()).status == 202)
        await fixture.shutdown()
    }

    @Test func aBodyOverTheLimitIs413() async throws {
        let fixture = try CollectorFixture { $0.maxBodyBytes = 64 * 1024 }
        let response = try await fixture.post([UInt8](repeating: UInt8(ascii: " "), count: 64 * 1024 + 1))
        #expect(response.status == 413)
        #expect(response.json["error"] as? String == "too_large")
        await fixture.shutdown()
    }

    @Test(arguments: [nil, "text/xml", "text/plain", "application/x-www-form-urlencoded"])
    func aWrongContentTypeIs415(contentType: String?) async throws {
        let fixture = try CollectorFixture()
        let response = try await fixture.post(Batches.good(), contentType: contentType)
        #expect(response.status == 415)
        #expect(response.json["error"] as? String == "unsupported_media_type")
        #expect(try await fixture.post(Batches.good(), contentType: "application/json; charset=utf-8").status == 202)
        await fixture.shutdown()
    }

    @Test func anUnknownEncodingIs415AndGzipAndDeflateWork() async throws {
        let fixture = try CollectorFixture()
        #expect(try await fixture.post(Batches.good(), encoding: "br").status == 415)
        let gzip = try await fixture.post(Gzip.compress(Batches.good()), encoding: "gzip")
        #expect(gzip.status == 202)
        let deflate = try await fixture.post(Gzip.compress(Batches.good(), format: .deflate), encoding: "deflate")
        #expect(deflate.status == 202)
        #expect(try await fixture.post(Batches.good(), encoding: "identity").status == 202)
        await fixture.shutdown()
    }

    @Test func aSpentRateLimitIs429WithRetryAfter() async throws {
        let fixture = try CollectorFixture { $0.defaultRateLimit = .init(perSecond: 0.01, burst: 5) }
        #expect(try await fixture.post(Batches.good(events: 5)).status == 202)
        let limited = try await fixture.post(Batches.good(events: 1))
        #expect(limited.status == 429)
        #expect(limited.json["error"] as? String == "rate_limited")
        #expect(Int(limited.header("Retry-After") ?? "") ?? 0 >= 1)
        // The other key has its own bucket.
        let other = Batches.batch(appID: CollectorFixture.otherApp, events: [Batches.event()])
        #expect(try await fixture.post(other, key: CollectorFixture.otherKey).status == 202)
        await fixture.shutdown()
    }

    @Test(arguments: ["GET", "PUT", "TRACE", "DELETE"])
    func aWrongMethodIs405(method: String) async throws {
        let fixture = try CollectorFixture()
        let response = try await fixture.get("/v1/diagnostics", method: method)
        #expect(response.status == 405)
        #expect(response.json["error"] as? String == "method_not_allowed")
        #expect(response.header("Cache-Control") == "no-store")
        #expect(response.header("X-Content-Type-Options") == "nosniff")
        await fixture.shutdown()
    }

    @Test func tooManyEventsIs413ForTheWholeBatch() async throws {
        let fixture = try CollectorFixture { $0.maxEventsPerBatch = 10 }
        let response = try await fixture.post(Batches.good(events: 11))
        #expect(response.status == 413)
        #expect(response.json["error"] as? String == "too_large")
        #expect(try await fixture.post(Batches.good(events: 10)).status == 202)
        await fixture.shutdown()
    }

    @Test func oldAndFutureEventsAreDroppedAfterSkewCorrection() async throws {
        let fixture = try CollectorFixture()
        func at(_ offset: Double) -> String {
            #"{"kind":"unknownType","occurredAt":"\#(Batches.now(offset: offset))"}"#
        }
        let body = Batches.batch(events: [at(-73 * 3600), at(-1), at(11 * 60), at(9 * 60)])
        let response = try await fixture.post(body)
        #expect(response.status == 202)
        #expect(response.json["accepted"] as? Int == 2)
        let diagnostics = try #require(response.json["diagnostics"] as? [[String: String]])
        #expect(diagnostics.map { $0["path"] } == ["events.Index 0", "events.Index 2"])
        // A device clock one hour behind: its events are an hour "old" by its own clock, and fine after correction.
        let skewed = Array(
            """
            {"sentAt":"\(Batches.now(offset: -3600))","client":{"appID":"com.example.shop","appVersion":"1",
             "platform":"ios"},"events":[\(at(-3600 - 30 * 60))]}
            """.utf8)
        let corrected = try await fixture.post(skewed)
        #expect(corrected.json["accepted"] as? Int == 1)
        await fixture.shutdown()
    }

    /// Nanoseconds since 1970 pass Int64 after the year 2262: a `sentAt` in 4052 trapped and crashed the collector
    /// (found by the ingest-request fuzz target: `Tests/Fuzz/ingest-request/sent-at-year-4052.http`), and an
    /// `occurredAt` 2^64 ns (about 584.5 years) ahead wrapped around to "now" and was accepted.
    @Test func timesCenturiesAwayAreJudgedWithoutOverflow() async throws {
        let fixture = try CollectorFixture()
        func inYear4052(_ offset: Double) -> String { "4052" + Batches.now(offset: offset).dropFirst(4) }
        // A device clock two thousand years ahead: its event of a minute ago is fine after correction.
        let skewed = Array(
            """
            {"sentAt":"\(inYear4052(0))","client":{"appID":"com.example.shop","appVersion":"1","platform":"ios"},
             "events":[{"kind":"unknownType","occurredAt":"\(inYear4052(-60))"},
                       {"kind":"unknownType","occurredAt":"\(Batches.now(offset: -60))"}]}
            """.utf8)
        let corrected = try await fixture.post(skewed)
        #expect(corrected.status == 202)
        #expect(corrected.json["accepted"] as? Int == 1)
        let skewedDrops = try #require(corrected.json["diagnostics"] as? [[String: String]])
        #expect(skewedDrops.map { $0["message"] } == ["Event is older than the maximum age"])
        // Without sentAt, an event 2^64 ns ahead is in the future, not now.
        let wrapped = Batches.now(offset: 18_446_744_073.709_551_616)
        let ahead = try await fixture.post(
            Batches.batch(events: [#"{"kind":"unknownType","occurredAt":"\#(wrapped)"}"#]))
        #expect(ahead.status == 202)
        #expect(ahead.json["accepted"] as? Int == 0)
        #expect(try await fixture.post(Batches.good(events: 1)).status == 202)
        await fixture.shutdown()
    }

    @Test func healthAndReadinessAnswerInNoneMode() async throws {
        let fixture = try CollectorFixture()
        #expect(try await fixture.get("/healthz").status == 200)
        #expect(try await fixture.get("/readyz").status == 200)
        let metrics = try await fixture.get("/metrics")
        #expect(metrics.status == 200)
        #expect(metrics.bodyText.contains("flowmeter_build_info{"))
        #expect(metrics.bodyText.contains("flowmeter_kafka_up 1"))
        await fixture.shutdown()
    }
}
