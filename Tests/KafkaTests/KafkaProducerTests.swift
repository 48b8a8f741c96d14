import FlowmeterModels
import FlowmeterWire
import Kafka
import TestSupport
import Testing

@Suite struct KafkaProducerTests {
    @Test func messagesRoundTripWithKeysAndHeaders() async throws {
        let fixture = try KafkaFixture()
        let producer = try fixture.makeProducer()
        let messages = [
            KafkaProducerMessage(
                topic: KafkaFixture.eventsTopic, key: Array("app-1".utf8), value: Array(#"{"n":1}"#.utf8),
                headers: TestEvents.headers),
            KafkaProducerMessage(
                topic: KafkaFixture.eventsTopic, key: nil, value: [0, 255, 7],
                headers: [KafkaHeader(name: "empty", value: nil), KafkaHeader(name: "blank", value: [])]),
        ]
        for message in messages {
            let before = MonotonicClock.nanoseconds()
            let report = try await producer.send(message)
            let elapsed = MonotonicClock.nanoseconds() - before
            #expect(report.persistence == .persisted)
            #expect(report.error == nil)
            #expect(report.offset >= 0)
            // The latency is the producer's own enqueue-to-report time, on the same clock: inside the send.
            #expect(report.latencyNanoseconds > 0 && report.latencyNanoseconds <= elapsed)
            #expect(report.latency == .nanoseconds(report.latencyNanoseconds))
        }
        #expect(await producer.shutdown(timeout: .seconds(5)) == 0)

        let consumed = try await fixture.consumeAll(topic: KafkaFixture.eventsTopic, expecting: 2)
        try #require(consumed.count == 2)
        for message in messages {
            let match = try #require(consumed.first { $0.value == message.value })
            #expect(match.key == message.key)
            #expect(match.headers == message.headers)
            #expect(match.topic == KafkaFixture.eventsTopic)
            #expect(match.timestamp != nil)
        }
    }

    /// One batch that switches topic, headers and partitioning from message to message: each message keeps its own
    /// topic, headers and partition, and a keyed message after a partitioned one goes back to the partitioner.
    @Test func oneBatchMixingTopicsHeadersAndPartitionsKeepsEachMessagesOwn() async throws {
        let fixture = try KafkaFixture()
        let producer = try fixture.makeProducer()
        let log = DeliveryLog()
        let other = [KafkaHeader(name: "schema", value: "other"), KafkaHeader(name: "none", value: nil)]
        let sameKey = Array("one-key".utf8)
        try producer.enqueueBatch(completion: log.completion(for: Array(0..<40))) { batch in
            for id in 0..<40 {
                let value = Array("m-\(id)".utf8)
                switch id % 4 {
                case 0:
                    try batch.append(
                        topic: KafkaFixture.eventsTopic, key: sameKey, value: value, headers: TestEvents.headers)
                case 1:
                    try batch.append(topic: KafkaFixture.alertsTopic, key: sameKey, value: value, headers: other)
                case 2:
                    try batch.append(
                        topic: KafkaFixture.eventsTopic, partition: 2, key: sameKey, value: value,
                        headers: TestEvents.headers)
                default:
                    try batch.append(topic: KafkaFixture.eventsTopic, value: value)
                }
            }
        }
        #expect(try await log.waitFor(batches: 1))
        #expect(log.persisted == 40)
        #expect(await producer.shutdown(timeout: .seconds(5)) == 0)

        let events = try await fixture.consumeAll(topic: KafkaFixture.eventsTopic, expecting: 30)
        let alerts = try await fixture.consumeAll(topic: KafkaFixture.alertsTopic, expecting: 10)
        #expect(events.count == 30)
        #expect(alerts.count == 10)
        func id(_ message: KafkaConsumerMessage) -> Int? {
            Int(String(decoding: message.value.dropFirst(2), as: UTF8.self))
        }
        // Keyed messages with one key share one partition, whatever partition the explicit ones went to.
        let keyedPartitions = Set(events.filter { id($0).map { $0 % 4 == 0 } ?? false }.map(\.partition))
        #expect(keyedPartitions.count == 1)
        for message in events {
            let number = try #require(id(message))
            switch number % 4 {
            case 0:
                #expect(message.headers == TestEvents.headers)
                #expect(message.key == sameKey)
            case 2:
                #expect(message.headers == TestEvents.headers)
                #expect(message.partition == 2)
            default:
                #expect(message.headers.isEmpty)
                #expect(message.key == nil)
            }
        }
        #expect(alerts.allSatisfy { $0.headers == other && id($0).map { $0 % 4 == 1 } == true })
    }

    @Test func aBatchCompletesOnceWithEveryReport() async throws {
        let fixture = try KafkaFixture()
        let latencies = DeliveryCounter()
        let producer = try fixture.makeProducer(deliveryObserver: { _ in latencies.increment() })
        let log = DeliveryLog()
        let ids = Array(0..<1000)
        try TestEvents.enqueue(ids, to: producer, topic: KafkaFixture.rollupsTopic, log: log)
        #expect(try await log.waitFor(batches: 1))
        let outcome = try #require(log.outcomes.first)
        #expect(outcome.enqueued == 1000)
        #expect(outcome.persisted == 1000)
        #expect(outcome.isFullyPersisted)
        #expect(latencies.value == 1000)
        #expect(producer.counters.delivered == 1000)
        #expect(await producer.shutdown(timeout: .seconds(5)) == 0)
        #expect(log.outcomes.count == 1)
    }

    @Test func flushWaitsForEveryReport() async throws {
        let fixture = try KafkaFixture()
        let producer = try fixture.makeProducer()
        let log = DeliveryLog()
        try TestEvents.enqueue(Array(0..<500), to: producer, topic: KafkaFixture.eventsTopic, log: log)
        #expect(await producer.flush(timeout: .seconds(10)) == 0)
        #expect(log.persisted == 500)
        #expect(producer.counters.queueDepth == 0)
        #expect(await producer.shutdown(timeout: .seconds(5)) == 0)
    }

    @Test func aFullQueueThrowsAtOnceAndKeepsWhatWasEnqueued() async throws {
        let fixture = try KafkaFixture()
        try fixture.cluster.setBrokerDown(KafkaMockCluster.allBrokers)
        let producer = try fixture.makeProducer { $0.queueBufferingMaxMessages = 10 }
        let log = DeliveryLog()
        var enqueued = 0
        let error = try #require(throws: KafkaError.self) {
            try producer.enqueueBatch(completion: log.completion(for: Array(0..<20))) { batch in
                defer { enqueued = batch.count }
                for id in 0..<20 {
                    try batch.append(topic: KafkaFixture.eventsTopic, value: Array("event-\(id)".utf8))
                }
            }
        }
        #expect(error.code == .queueFull)
        #expect(error.isRetriable)
        #expect(enqueued == 10)

        // Shutting down with the brokers away fails the queued messages back as retriable, not persisted.
        #expect(await producer.shutdown(timeout: .zero) == 10)
        #expect(try await log.waitFor(batches: 1))
        let outcome = try #require(log.outcomes.first)
        #expect(outcome.enqueued == 10)
        #expect(outcome.persisted == 0)
        #expect(outcome.failures.count == 10)
        #expect(outcome.failures.allSatisfy { $0.error?.isRetriable == true && $0.persistence != .persisted })
    }

    @Test func shutdownFlushesEverythingEnqueued() async throws {
        let fixture = try KafkaFixture()
        let producer = try fixture.makeProducer()
        let log = DeliveryLog()
        for start in stride(from: 0, to: 2000, by: 250) {
            try TestEvents.enqueue(Array(start..<start + 250), to: producer, topic: KafkaFixture.alertsTopic, log: log)
        }
        #expect(await producer.shutdown(timeout: .seconds(15)) == 0)
        #expect(log.persisted == 2000)

        let consumed = try await fixture.consumeAll(topic: KafkaFixture.alertsTopic, expecting: 2000)
        #expect(Set(consumed.compactMap(TestEvents.id(of:))) == Set(0..<2000))

        let late = try #require(throws: KafkaError.self) {
            try TestEvents.enqueue([1], to: producer, topic: KafkaFixture.alertsTopic, log: log)
        }
        #expect(late.code == .shutDown)
    }

    @Test func sendReportsATimedOutMessageAsSafeToRetry() async throws {
        let fixture = try KafkaFixture()
        try fixture.cluster.setBrokerDown(KafkaMockCluster.allBrokers)
        let producer = try fixture.makeProducer { $0.messageTimeout = .seconds(1) }
        let error = try await #require(throws: KafkaError.self) {
            try await producer.send(KafkaProducerMessage(topic: KafkaFixture.eventsTopic, value: [1]))
        }
        #expect(error.code == .messageTimedOut)
        #expect(error.isRetriable)
        #expect(error.persistence == .notPersisted)
        #expect(producer.counters.failed == 1)
        _ = await producer.shutdown(timeout: .zero)
    }

    @Test func sendReportsAPermanentBrokerErrorAsNotRetriable() async throws {
        let fixture = try KafkaFixture()
        let producer = try fixture.makeProducer()
        // Warm up so the next produce request is the one that fails.
        _ = try await producer.send(KafkaProducerMessage(topic: KafkaFixture.deploysTopic, value: [0]))
        fixture.cluster.pushRequestErrors(api: .produce, errors: [.topicAuthorizationFailed])
        let error = try await #require(throws: KafkaError.self) {
            try await producer.send(KafkaProducerMessage(topic: KafkaFixture.deploysTopic, value: [1]))
        }
        #expect(error.code == .topicAuthorizationFailed)
        #expect(!error.isRetriable)
        _ = await producer.shutdown(timeout: .zero)
    }

    @Test func aFatalErrorRebuildsTheProducerAndNothingIsLost() async throws {
        let fixture = try KafkaFixture()
        let producer = try fixture.makeProducer { $0.additionalProperties = ["reconnect.backoff.max.ms": "500"] }
        // Deliver one message first so the idempotent producer has its id, then hold the next ones in the queue.
        _ = try await producer.send(KafkaProducerMessage(topic: KafkaFixture.eventsTopic, value: Array("event-0".utf8)))
        try fixture.cluster.setBrokerDown(KafkaMockCluster.allBrokers)
        let held = DeliveryLog()
        try TestEvents.enqueue(Array(1...100), to: producer, topic: KafkaFixture.eventsTopic, log: held)

        try producer.injectFatalError()
        #expect(try await held.waitFor(batches: 1))
        #expect(producer.counters.rebuilds == 1)
        #expect(held.failures.count == 100)
        #expect(held.failures.allSatisfy { $0.error?.isRetriable == true })

        try fixture.cluster.setBrokerUp(KafkaMockCluster.allBrokers)
        let result = try await TestEvents.produceReliably(
            held.failedIDs + Array(101...200), to: producer, topic: KafkaFixture.eventsTopic)
        #expect(result.persisted == 200)
        #expect(await producer.shutdown(timeout: .seconds(5)) == 0)

        let consumed = try await fixture.consumeAll(topic: KafkaFixture.eventsTopic, expecting: 201)
        #expect(Set(consumed.compactMap(TestEvents.id(of:))) == Set(0...200))
    }
}
