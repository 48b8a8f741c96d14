import Foundation
import Kafka
import TestSupport
import Testing

@Suite struct KafkaConsumerTests {
    @Test func aCommittedGroupResumesAfterWhatItProcessed() async throws {
        let fixture = try KafkaFixture(brokers: 1, partitions: 1)
        let producer = try fixture.makeProducer()
        let topic = KafkaFixture.deploysTopic
        try await Self.produce(Array(0..<10), with: producer, to: topic)

        let group = "sink"
        let read = try await Self.readAndCommit(fixture: fixture, topic: topic, group: group, count: 10)
        #expect(read.compactMap(TestEvents.id(of:)) == Array(0..<10))

        try await Self.produce(Array(10..<15), with: producer, to: topic)
        #expect(await producer.shutdown(timeout: .seconds(5)) == 0)

        let resumed = try await Self.readAndCommit(fixture: fixture, topic: topic, group: group, count: 5)
        #expect(resumed.compactMap(TestEvents.id(of:)) == Array(10..<15))
    }

    /// A consumer that is behind (more waiting than `maxMessages`) gets a full poll at once: the gathering time is
    /// for a consumer that is caught up, never a wait a full poll pays. The polls gather for 30 s; a full one that
    /// waited them out would take that long, one that did not takes milliseconds (the bound, 15 s, is only there to
    /// tell the two apart). The last poll asks for more than is left and returns what there is after its gathering.
    @Test func aPollThatCanBeFilledReturnsWithoutWaitingOutItsGathering() async throws {
        let fixture = try KafkaFixture(brokers: 1, partitions: 1)
        let producer = try fixture.makeProducer()
        let topic = KafkaFixture.deploysTopic
        try await Self.produce(Array(0..<30), with: producer, to: topic)
        #expect(await producer.shutdown(timeout: .seconds(5)) == 0)

        let consumer = try fixture.makeConsumer(topics: [topic], groupID: "behind")
        let polls = try await onOwnThread { () -> [(ids: [Int], seconds: Int64)] in
            defer { consumer.close() }
            return try [(10, Duration.seconds(30)), (15, .seconds(30)), (15, .milliseconds(200))].map {
                let started = ContinuousClock.now
                let messages = try consumer.poll(maxMessages: $0.0, timeout: .seconds(20), gathering: $0.1)
                return (messages.compactMap(TestEvents.id(of:)), (ContinuousClock.now - started).components.seconds)
            }
        }
        #expect(polls.map(\.ids) == [Array(0..<10), Array(10..<25), Array(25..<30)])
        #expect(polls.prefix(2).allSatisfy { $0.seconds < 15 }, "\(polls.map(\.seconds)) s")
    }

    @Test func pollAfterCloseThrows() throws {
        let fixture = try KafkaFixture(brokers: 1)
        let consumer = try fixture.makeConsumer(topics: [KafkaFixture.eventsTopic])
        consumer.close()
        let error = try #require(throws: KafkaError.self) { try consumer.poll(timeout: .zero) }
        #expect(error.code == .shutDown)
    }

    /// Produces one message per id and waits until the batch is delivered.
    private static func produce(_ ids: [Int], with producer: KafkaProducer, to topic: String) async throws {
        let log = DeliveryLog()
        try TestEvents.enqueue(ids, to: producer, topic: topic, log: log)
        #expect(try await log.waitFor(batches: 1))
    }

    /// Runs `body` on a thread of its own (a consumer's poll blocks).
    private func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
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
