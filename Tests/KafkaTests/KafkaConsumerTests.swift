import Foundation
import Kafka
import TestSupport
import Testing

@Suite struct KafkaConsumerTests {
    @Test func aCommittedGroupResumesAfterWhatItProcessed() async throws {
        let fixture = try KafkaFixture(brokers: 1, partitions: 1)
        let producer = try fixture.makeProducer()
        let topic = KafkaFixture.deploysTopic
        let first = DeliveryLog()
        try TestEvents.enqueue(Array(0..<10), to: producer, topic: topic, log: first)
        #expect(try await first.waitFor(batches: 1))

        let group = "sink"
        let read = try await Self.readAndCommit(fixture: fixture, topic: topic, group: group, count: 10)
        #expect(read.compactMap(TestEvents.id(of:)) == Array(0..<10))

        let second = DeliveryLog()
        try TestEvents.enqueue(Array(10..<15), to: producer, topic: topic, log: second)
        #expect(try await second.waitFor(batches: 1))
        #expect(await producer.shutdown(timeout: .seconds(5)) == 0)

        let resumed = try await Self.readAndCommit(fixture: fixture, topic: topic, group: group, count: 5)
        #expect(resumed.compactMap(TestEvents.id(of:)) == Array(10..<15))
    }

    @Test func pollAfterCloseThrows() throws {
        let fixture = try KafkaFixture(brokers: 1)
        let consumer = try fixture.makeConsumer(topics: [KafkaFixture.eventsTopic])
        consumer.close()
        let error = try #require(throws: KafkaError.self) { try consumer.poll(timeout: .zero) }
        #expect(error.code == .shutDown)
    }

    // Polls on a thread of its own (the consumer blocks), commits, and leaves the group.
    private static func readAndCommit(
        fixture: KafkaFixture,
        topic: String,
        group: String,
        count: Int
    ) async throws -> [KafkaConsumerMessage] {
        let consumer = try fixture.makeConsumer(topics: [topic], groupID: group)
        return try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                continuation.resume(
                    with: Result {
                        defer { consumer.close() }
                        var messages: [KafkaConsumerMessage] = []
                        let deadline = ContinuousClock.now + .seconds(20)
                        while messages.count < count && ContinuousClock.now < deadline {
                            messages += try consumer.poll(
                                maxMessages: count - messages.count, timeout: .milliseconds(200))
                        }
                        try consumer.commit()
                        return messages
                    })
            }
            thread.start()
        }
    }
}
