import Foundation
import Kafka
import TestSupport
import Testing

/// Backpressure that spreads out: a full spool is answered from the request's headers, before its body is read and
/// before its key's bucket is charged; every 503 and 429 carries a `Retry-After` drawn from a documented range
/// (docs/collector.md), so clients told to come back do not come back together.
@Suite struct SpoolBackpressureTests {
    /// Fills a 256 KiB spool with the brokers down; returns once a batch got 503 for room.
    static func fill(_ fixture: CollectorFixture) async throws {
        var refused = false
        for index in 0..<400 where !refused {
            let response = try await fixture.post(Batches.good(events: 5, id: "fill-\(index)"))
            #expect(response.status == 202 || response.status == 503)
            refused = response.status == 503
        }
        try #require(refused, "256 KiB of spool filled up")
    }

    @Test func aFullSpoolIsAnswered503FromTheHeadersBeforeTheBodyOrTheKeysTokens() async throws {
        let kafka = try KafkaFixture()
        let directory = try TemporaryDirectory(prefix: "flowmeter-full-admission")
        let fixture = try SpoolOutageTests.collector(kafka, spool: directory, maxBytes: 256 << 10)
        try kafka.cluster.setBrokerDown(KafkaMockCluster.allBrokers)
        try await Self.fill(fixture)
        let rejectedBefore = try await fixture.metric(#"flowmeter_rejections_total{reason="unavailable_spool_full"}"#)

        // Headers only: the body is never sent, so only an answer from the headers can come back.
        let port = fixture.port
        let response = try await HTTPTestClient.onThread {
            let client = try HTTPTestClient(port: port, readTimeout: .seconds(30))
            defer { client.close() }
            try client.send(
                HTTPTestClient.head(
                    "POST", "/v1/diagnostics",
                    headers: [
                        ("Authorization", "Bearer \(CollectorFixture.shopKey)"), ("Content-Type", "application/json"),
                        ("Content-Length", "100000"),
                    ]))
            return try client.readResponse()
        }
        #expect(response.status == 503)
        #expect(response.json["error"] as? String == "unavailable")
        let retryAfter = Int(response.header("Retry-After") ?? "")
        #expect(
            retryAfter.map { (3...8).contains($0) } == true, "\(String(describing: response.header("Retry-After")))")
        let rejectedAfter = try await fixture.metric(#"flowmeter_rejections_total{reason="unavailable_spool_full"}"#)
        #expect((rejectedAfter ?? 0) == (rejectedBefore ?? 0) + 1, "answered by the admission check")
        await fixture.shutdown()
    }

    @Test func everyRetryAfterIsDrawnFromItsRangeAndTheyDiffer() async throws {
        let kafka = try KafkaFixture()
        let directory = try TemporaryDirectory(prefix: "flowmeter-retry-after")
        let fixture = try SpoolOutageTests.collector(kafka, spool: directory, maxBytes: 256 << 10)
        try kafka.cluster.setBrokerDown(KafkaMockCluster.allBrokers)
        try await Self.fill(fixture)
        var unavailable: [Int] = []
        for index in 0..<40 {
            let response = try await fixture.post(Batches.good(events: 5, id: "full-\(index)"))
            #expect(response.status == 503)
            if let seconds = response.header("Retry-After").flatMap({ Int($0) }) { unavailable.append(seconds) }
        }
        #expect(unavailable.count == 40, "every 503 sets Retry-After")
        #expect(unavailable.allSatisfy { (3...8).contains($0) }, "\(unavailable)")
        #expect(Set(unavailable).count > 1, "not all equal: \(unavailable)")
        await fixture.shutdown()

        // 429: the bucket's own wait, plus 0-2 s.
        let limited = try CollectorFixture(kafka: kafka) { configuration in
            configuration.defaultRateLimit = .init(perSecond: 0.01, burst: 1)
        }
        var rateLimited: [Int] = []
        for index in 0..<40 {
            let response = try await limited.post(Batches.good(events: 1, id: "limited-\(index)"))
            if response.status == 429, let seconds = response.header("Retry-After").flatMap({ Int($0) }) {
                rateLimited.append(seconds)
            }
        }
        #expect(rateLimited.count >= 38, "the bucket is spent after its burst")
        // A bucket refilling at 0.01 token/s has its next token in at most 100 s.
        #expect(rateLimited.allSatisfy { $0 >= 1 && $0 <= 102 }, "\(rateLimited)")
        #expect(Set(rateLimited).count > 1, "not all equal: \(rateLimited)")
        await limited.shutdown()
    }
}
