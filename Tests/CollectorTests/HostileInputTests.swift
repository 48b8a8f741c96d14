import Collector
import Foundation
import Gzip
import TestSupport
import Testing

/// docs/reliability.md H2–H5, H8, H10, H11: each hostile request gets its answer, and a good request still succeeds.
@Suite struct HostileInputTests {
    private func expectStillServing(_ fixture: CollectorFixture) async throws {
        #expect(try await fixture.post(Batches.good()).status == 202)
    }

    @Test func truncatedJSONIs400() async throws {
        let fixture = try CollectorFixture()
        let good = Batches.good()
        let response = try await fixture.post(Array(good[..<(good.count / 2)]))
        #expect(response.status == 400)
        #expect(response.json["error"] as? String == "invalid_json")
        try await expectStillServing(fixture)
        await fixture.shutdown()
    }

    @Test func invalidUTF8Is400() async throws {
        let fixture = try CollectorFixture()
        var body = Array(
            #"{"client":{"appID":"com.example.shop","appVersion":"1","platform":"ios"},"events":[],"x":""#.utf8)
        body += [0xFF, 0xFE, 0xC0] + Array(#""}"#.utf8)
        #expect(try await fixture.post(body).status == 400)
        try await expectStillServing(fixture)
        await fixture.shutdown()
    }

    /// Posts a body over the limit the way H2 says it is answered: the 413 comes from the headers alone, so send
    /// them and the first 64 KiB, then read the answer. Writing the whole body would race the server's close, and a
    /// reset can discard the answer before the client reads it.
    private func postOversized(_ body: [UInt8], to fixture: CollectorFixture) async throws -> HTTPTestResponse {
        let port = fixture.port
        return try await HTTPTestClient.onThread {
            let client = try HTTPTestClient(port: port)
            defer { client.close() }
            try client.send(
                HTTPTestClient.head(
                    "POST", "/v1/diagnostics",
                    headers: [
                        ("Authorization", "Bearer \(CollectorFixture.shopKey)"),
                        ("Content-Type", "application/json"), ("Content-Length", String(body.count)),
                    ])
                    + body[..<min(body.count, 64 * 1024)])
            return try client.readResponse()
        }
    }

    @Test func nesting10000DeepIs400() async throws {
        let fixture = try CollectorFixture()
        let body = Array(String(repeating: "[", count: 10_000).utf8) + Array(String(repeating: "]", count: 10_000).utf8)
        #expect(try await fixture.post(body).status == 400)
        try await expectStillServing(fixture)
        await fixture.shutdown()
    }

    @Test func aTenMegabyteStringIs413AtTheBodyLimitAndGzippedAtTheInflatedCap() async throws {
        let fixture = try CollectorFixture()
        let huge =
            Array(#"{"x":""#.utf8) + [UInt8](repeating: UInt8(ascii: "a"), count: 10_000_000) + Array(#""}"#.utf8)
        let early = try await postOversized(huge, to: fixture)
        #expect(early.status == 413)
        #expect(early.json["error"] as? String == "too_large")
        let compressed = Gzip.compress(huge)
        #expect(compressed.count < 1 << 20)
        let inflated = try await fixture.post(compressed, encoding: "gzip")
        #expect(inflated.status == 413)
        #expect(inflated.json["error"] as? String == "too_large")
        try await expectStillServing(fixture)
        await fixture.shutdown()
    }

    @Test func aMillionElementArrayIsRefused() async throws {
        let fixture = try CollectorFixture()
        let elements = Array(repeating: "0", count: 1_000_000).joined(separator: ",")
        let text =
            #"{"client":{"appID":"com.example.shop","appVersion":"1","platform":"ios"},"events":["# + elements + "]}"
        let plain = try await postOversized(Array(text.utf8), to: fixture)
        #expect(plain.status == 413)
        let gzipped = try await fixture.post(Gzip.compress(Array(text.utf8)), encoding: "gzip")
        #expect(gzipped.status == 413)
        #expect(gzipped.json["error"] as? String == "too_large")
        try await expectStillServing(fixture)
        await fixture.shutdown()
    }

    @Test(arguments: ["gzip", "deflate"])
    func aBombInflatingTo1GiBIs413(encoding: String) async throws {
        let fixture = try CollectorFixture()
        let compressor = GzipCompressor(format: encoding == "gzip" ? .gzip : .deflate, level: 9)
        var bomb: [UInt8] = []
        let zeros = [UInt8](repeating: 0, count: 1 << 20)
        for _ in 0..<1024 { compressor.write(zeros, into: &bomb) }
        compressor.finish(into: &bomb)
        #expect(bomb.count <= 1 << 20)
        let response = try await fixture.post(bomb, encoding: encoding)
        #expect(response.status == 413)
        try await expectStillServing(fixture)
        await fixture.shutdown()
    }

    @Test func aChunkedBodyOverTheLimitClosesTheConnection() async throws {
        let fixture = try CollectorFixture { $0.maxBodyBytes = 64 * 1024 }
        let port = fixture.port
        let closed = try await HTTPTestClient.onThread {
            let client = try HTTPTestClient(port: port)
            defer { client.close() }
            let chunk = [UInt8](repeating: UInt8(ascii: " "), count: 16 * 1024)
            do {
                try client.sendChunkedRequest(
                    "POST", "/v1/diagnostics",
                    headers: [
                        ("Authorization", "Bearer \(CollectorFixture.shopKey)"), ("Content-Type", "application/json"),
                    ],
                    chunks: Array(repeating: chunk, count: 8), finish: false)
            } catch HTTPTestClientError.closedByPeer {
                return true
            }
            _ = try client.waitForClose(timeout: .seconds(5))
            return true
        }
        #expect(closed)
        try await expectStillServing(fixture)
        await fixture.shutdown()
    }

    @Test func aClientSendingAByteASecondIsCutOff() async throws {
        let fixture = try CollectorFixture { $0.requestDeadline = .seconds(2) }
        let port = fixture.port
        let request = HTTPTestClient.head(
            "POST", "/v1/diagnostics",
            headers: [
                ("Authorization", "Bearer \(CollectorFixture.shopKey)"), ("Content-Type", "application/json"),
                ("Content-Length", "100000"),
            ])
        let sent = try await HTTPTestClient.onThread {
            let client = try HTTPTestClient(port: port)
            defer { client.close() }
            return try client.trickle(request + [UInt8](repeating: 0x20, count: 20), interval: .seconds(1))
        }
        #expect(sent < request.count + 20)
        try await expectStillServing(fixture)
        await fixture.shutdown()
    }

    @Test func installIDsNeverLeaveRawAndMapStably() async throws {
        let fixture = try CollectorFixture()
        let raw = "PII-INSTALL-\(UUID().uuidString)"
        for _ in 0..<3 {
            #expect(try await fixture.post(Batches.good(installID: raw)).status == 202)
        }
        #expect(!fixture.logs.joined().contains(raw))
        #expect(!(try await fixture.get("/metrics")).bodyText.contains(raw))
        #expect(!fixture.logs.joined().contains(CollectorFixture.shopKey))
        await fixture.shutdown()
    }

    /// Without Kafka the metric is counted by a lookup per event; with Kafka, as the rollup aggregator records the
    /// durable batch (each series holding its child): the cap holds either way, and so do the counts, also for a
    /// second batch of the same and of new types.
    @Test(arguments: [false, true]) func randomWidgetTypesAreCappedInMetrics(withKafka: Bool) async throws {
        let kafka = withKafka ? try KafkaFixture() : nil
        let fixture = try CollectorFixture(kafka: kafka) { $0.metricsTypeCap = 3 }
        let events = (0..<20).map { Batches.event(widgetType: "random_\($0)") }
        #expect(try await fixture.post(Batches.batch(events: events)).status == 202)
        let text = try await fixture.get("/metrics").bodyText
        let series = text.split(separator: "\n").filter { $0.hasPrefix("flowmeter_diagnostic_events_total{") }
        #expect(series.count == 4)
        #expect(series.contains { $0.contains(#"widget_type="__other__""#) && $0.hasSuffix(" 17") })
        let more = (15..<25).map { Batches.event(widgetType: "random_\($0)") }
        #expect(try await fixture.post(Batches.batch(events: more)).status == 202)
        let again = try await fixture.get("/metrics").bodyText.split(separator: "\n")
            .filter { $0.hasPrefix("flowmeter_diagnostic_events_total{") }
        #expect(again.count == 4)
        #expect(again.contains { $0.contains(#"widget_type="__other__""#) && $0.hasSuffix(" 27") })
        await fixture.shutdown()
    }
}
