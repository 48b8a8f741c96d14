import Kafka
import TestSupport
import Testing

/// `sendQueuedNow()` sends what lingers: a message under a 5-minute linger (longer than any wait of the suite) is
/// delivered once asked, long before the linger would have sent it.
@Suite struct SendQueuedNowTests {
    @Test func aLingeringMessageIsSentOnceAskedNotAfterTheLinger() async throws {
        let fixture = try KafkaFixture()
        let producer = try fixture.makeProducer { $0.linger = .seconds(300) }
        _ = try producer.partitionCount(of: KafkaFixture.eventsTopic, timeout: .seconds(10))
        let message = KafkaProducerMessage(
            topic: KafkaFixture.eventsTopic, key: Array("app".utf8), value: Array(#"{"n":1}"#.utf8),
            headers: TestEvents.headers)
        let sent = Task { try await producer.send(message) }

        // Left alone, it lingers: nothing sends it for 5 minutes, so it is still queued however slow the machine.
        #expect(await eventually { producer.counters.queueDepth == 1 })
        #expect(producer.counters.delivered == 0)

        // Asked, it goes. A request counts while the poll thread's short flush runs, which a broker still connecting
        // can miss: ask again until it is delivered. Delivered at all proves the point: the linger is 5 minutes and
        // the wait's hang guard two.
        #expect(
            await eventually(every: .milliseconds(200)) {
                producer.sendQueuedNow()
                return producer.counters.delivered > 0
            })
        let report = try await sent.value
        #expect(report.persistence == .persisted)
        #expect(await producer.shutdown(timeout: .seconds(5)) == 0)
    }
}
