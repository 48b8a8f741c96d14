import Collector
import Synchronization
import Testing

/// `flowmeter serve --store` runs the sink in the collector's process: its stall shows on the collector's `/readyz`
/// as on `flowmeter sink --ops-listen`'s, under the collector's own reasons.
@Suite struct SinkReadinessTests {
    @Test func aStalledInProcessSinkMakesTheCollectorNotReady() async throws {
        let fixture = try CollectorFixture()
        let ready = try await fixture.get("/readyz")
        #expect(ready.status == 200)

        let stall = Mutex<(reason: String, message: String)?>(nil)
        fixture.collector.attachSinkReadiness { stall.withLock { $0 } }
        #expect(try await fixture.get("/readyz").status == 200, "attached but not stalled: ready")

        stall.withLock { $0 = ("store_disk_full", "The store fails as a whole: disk full") }
        let stalled = try await fixture.get("/readyz")
        #expect(stalled.status == 503)
        #expect(stalled.json["reason"] as? String == "store_disk_full")
        #expect(stalled.json["message"] as? String == "The store fails as a whole: disk full")
        #expect(stalled.json["error"] as? String == "unavailable")
        #expect(stalled.header("Retry-After") == "5")

        stall.withLock { $0 = nil }
        #expect(try await fixture.get("/readyz").status == 200, "ready again once the sink moves on")
        await fixture.shutdown()
    }
}
