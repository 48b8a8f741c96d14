import Kafka
import TestSupport
import Testing

/// `sendQueuedNow()` sends what lingers: a message under a 60 s linger is delivered within seconds once asked.
@Suite struct SendQueuedNowTests {
    @Test func aLingeringMessageIsSentOnceAskedNotAfterTheLinger() async throws {
        let fixture = try KafkaFixture()
        let producer = try fixture.makeProducer { $0.linger = .seconds(60) }
        _ = try producer.partitionCount(of: KafkaFixture.eventsTopic, timeout: .seconds(10))
        let message = KafkaProducerMessage(
            topic: KafkaFixture.eventsTopic, key: Array("app".utf8), value: Array(#"{"n":1}"#.utf8),
            headers: TestEvents.headers)
        let sent = Task { try await producer.send(message) }

        // Left alone, it lingers.
        try await Task.sleep(for: .seconds(1))
        #expect(producer.counters.delivered == 0)

        // Asked, it goes. A request counts while the poll thread's short flush runs, which a broker still connecting
        // can miss: ask again until it is delivered, within a third of the linger.
        let asked = ContinuousClock.now
        while producer.counters.delivered == 0 && ContinuousClock.now - asked < .seconds(20) {
            producer.sendQueuedNow()
            try await Task.sleep(for: .milliseconds(200))
        }
        let report = try await sent.value
        #expect(report.persistence == .persisted)
        #expect(ContinuousClock.now - asked < .seconds(20))
        #expect(await producer.shutdown(timeout: .seconds(5)) == 0)
    }
}
