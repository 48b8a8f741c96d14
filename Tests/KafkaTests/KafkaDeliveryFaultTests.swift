import Kafka
import TestSupport
import Testing

/// Delivery under broker faults, against the mock cluster (docs/reliability.md K1 and K3, scaled down for CI).
@Suite struct KafkaDeliveryFaultTests {
    private static let reconnectQuickly = ["reconnect.backoff.max.ms": "1000"]

    @Test func everyMessageSurvivesTenSecondsWithEveryBrokerDown() async throws {
        let fixture = try KafkaFixture()
        let producer = try fixture.makeProducer { $0.additionalProperties = Self.reconnectQuickly }
        let topic = KafkaFixture.eventsTopic
        // One delivery first, so the outage hits a producer that knows the cluster, as in production.
        _ = try await producer.send(KafkaProducerMessage(topic: topic, value: Array("event-20000".utf8)))

        try fixture.cluster.setBrokerDown(KafkaMockCluster.allBrokers)
        let log = DeliveryLog()
        let ids = Array(0..<20_000)
        for start in stride(from: 0, to: ids.count, by: 500) {
            try TestEvents.enqueue(Array(ids[start..<start + 500]), to: producer, topic: topic, log: log)
        }
        try await Task.sleep(for: .seconds(10))
        #expect(log.failures.isEmpty)
        try fixture.cluster.setBrokerUp(KafkaMockCluster.allBrokers)

        #expect(try await log.waitFor(batches: 40))
        #expect(log.failures.isEmpty, "\(log.failures.prefix(3))")
        #expect(log.persisted == 20_000)
        #expect(await producer.shutdown(timeout: .seconds(5)) == 0)

        let consumed = try await fixture.consumeAll(topic: topic, expecting: 20_001)
        #expect(Set(consumed.compactMap(TestEvents.id(of:))) == Set(0...20_000))
    }

    @Test func injectedDisconnectsLoseNothingAndDuplicatesAreReported() async throws {
        let fixture = try KafkaFixture()
        let producer = try fixture.makeProducer { $0.additionalProperties = Self.reconnectQuickly }
        let topic = KafkaFixture.rollupsTopic
        let ids = Array(0..<20_000)
        let result = try await TestEvents.produceReliably(ids, to: producer, topic: topic) { batch in
            // Three disconnects mid-request every 2,000 messages.
            if batch % 4 == 0 {
                fixture.cluster.pushRequestErrors(api: .produce, errors: [.transport, .transport, .transport])
            }
        }
        #expect(result.permanentFailures == 0)
        #expect(await producer.shutdown(timeout: .seconds(10)) == 0)

        let expected = Set(ids)
        let consumed = try await fixture.consume(topic: topic, settle: .milliseconds(500)) {
            Set($0.compactMap(TestEvents.id(of:))).isSuperset(of: expected)
        }
        let unique = Set(consumed.compactMap(TestEvents.id(of:)))
        #expect(unique == expected)
        let duplicates = consumed.count - unique.count
        // Duplicates are allowed with librdkafka 2.0.2 (at-least-once); the count is reported, not asserted.
        print(
            "injected disconnects: \(consumed.count) consumed, \(unique.count) unique, \(duplicates) duplicates,",
            "\(result.retried) re-produced, \(producer.counters.rebuilds) rebuilds")
        #expect(duplicates >= 0)

        if result.retried == 0 {
            // Without re-produced messages, each key's first occurrences keep the order they were produced in.
            var firstSeen = Set<Int>()
            var lastByKey: [[UInt8]: Int] = [:]
            for message in consumed {
                guard let id = TestEvents.id(of: message), firstSeen.insert(id).inserted, let key = message.key else {
                    continue
                }
                #expect(id > lastByKey[key, default: -1])
                lastByKey[key] = id
            }
        }
    }

    @Test func brokerOperationsRejectAnUnknownBroker() throws {
        let cluster = try KafkaMockCluster(brokers: 1)
        #expect(cluster.bootstrapServers.count == 1)
        #expect(throws: KafkaError.self) { try cluster.setBrokerDown(7) }
        try cluster.setBrokerDown(KafkaMockCluster.allBrokers)
        try cluster.setBrokerUp(KafkaMockCluster.allBrokers)
        try cluster.setRoundTripTime(broker: KafkaMockCluster.allBrokers, milliseconds: 0)
    }
}
