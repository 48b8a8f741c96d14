import CRdKafka
import TestSupport
import Testing

@testable import Kafka

/// Header lists made once and reused: each delivery report gives its message's list back to the producer's pool,
/// and the next message carries the same headers without librdkafka building a list.
@Suite struct HeaderListReuseTests {
    @Test func reportsGiveTheListsBackAndTheNextBatchesReuseThem() async throws {
        let fixture = try KafkaFixture()
        let producer = try fixture.makeProducer()
        let log = DeliveryLog()
        try TestEvents.enqueue(Array(0..<300), to: producer, topic: KafkaFixture.eventsTopic, log: log)
        #expect(try await log.waitFor(batches: 1))
        // A report gives its list back before it counts toward the completion, so all are back by now.
        let afterFirst = producer.counters
        #expect(afterFirst.headerListsBuilt > 0 && afterFirst.headerListsBuilt <= 300)
        #expect(afterFirst.headerListsKept == afterFirst.headerListsBuilt)

        for round in 1...3 {
            try TestEvents.enqueue(
                Array(round * 300..<(round + 1) * 300), to: producer, topic: KafkaFixture.eventsTopic, log: log)
            #expect(try await log.waitFor(batches: round + 1))
        }
        let afterAll = producer.counters
        // The first batch's lists carried the three after it: at most one built per message ever in flight at once.
        #expect(afterAll.headerListsBuilt == afterFirst.headerListsBuilt)
        #expect(afterAll.headerListsKept == afterAll.headerListsBuilt)
        #expect(log.persisted == 1200)
        #expect(await producer.shutdown(timeout: .seconds(5)) == 0)

        // Every message, on a fresh list or a reused one, carries exactly the two headers.
        let consumed = try await fixture.consumeAll(topic: KafkaFixture.eventsTopic, expecting: 1200)
        #expect(consumed.count == 1200)
        #expect(consumed.allSatisfy { $0.headers == TestEvents.headers })
        #expect(Set(consumed.compactMap(TestEvents.id(of:))) == Set(0..<1200))
    }

    @Test func eachSetOfHeadersHasItsOwnLists() async throws {
        let fixture = try KafkaFixture()
        let producer = try fixture.makeProducer()
        let other = [KafkaHeader(name: "schema", value: "flowmeter.alerts.v1"), KafkaHeader(name: "none", value: nil)]
        let log = DeliveryLog()
        for round in 0..<2 {
            try producer.enqueueBatch(completion: log.completion(for: Array(0..<40))) { batch in
                for id in 0..<40 {
                    let value = Array("event-\(round * 40 + id)".utf8)
                    if id % 2 == 0 {
                        try batch.append(
                            topic: KafkaFixture.eventsTopic, key: TestEvents.key(id), value: value,
                            headers: TestEvents.headers)
                    } else {
                        try batch.append(
                            topic: KafkaFixture.eventsTopic, key: TestEvents.key(id), value: value, headers: other)
                    }
                }
            }
            #expect(try await log.waitFor(batches: round + 1))
        }
        #expect(await producer.shutdown(timeout: .seconds(5)) == 0)
        let consumed = try await fixture.consumeAll(topic: KafkaFixture.eventsTopic, expecting: 80)
        #expect(consumed.count == 80)
        for message in consumed {
            let id = try #require(TestEvents.id(of: message))
            #expect(message.headers == (id % 2 == 0 ? TestEvents.headers : other))
        }
    }

    @Test func aRefusedMessageGivesItsListBack() async throws {
        let fixture = try KafkaFixture()
        let producer = try fixture.makeProducer()
        // Learn the topic's partitions first, so a partition it lacks is refused in the call.
        let partitions = try producer.partitionCount(of: KafkaFixture.eventsTopic, timeout: .seconds(10))
        let log = DeliveryLog()
        let error = try #require(throws: KafkaError.self) {
            try producer.enqueueBatch(completion: log.completion(for: [0])) { batch in
                try batch.append(
                    topic: KafkaFixture.eventsTopic, partition: partitions + 5, key: TestEvents.key(0),
                    value: Array("event-0".utf8), headers: TestEvents.headers)
            }
        }
        #expect(error.code == KafkaError.Code(RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION))
        let counters = producer.counters
        #expect(counters.headerListsBuilt == 1)
        #expect(counters.headerListsKept == 1)
        #expect(await producer.shutdown(timeout: .seconds(5)) == 0)
    }

    @Test func thePoolKeepsAtMostItsBoundAndBuildsTheHeadersInOrder() throws {
        let headers = [
            KafkaHeader(name: "content-type", value: "application/json"),
            KafkaHeader(name: "blank", value: []),
            KafkaHeader(name: "none", value: nil),
        ]
        let pool = RDKafkaHeaderPool(headers: headers, maxKept: 4)
        let lists = (0..<6).map { _ in pool.take() }
        #expect(pool.built.load(ordering: .relaxed) == 6)
        for list in lists { pool.give(list) }
        #expect(pool.keptCount == 4)
        let reused = pool.take()
        #expect(pool.built.load(ordering: .relaxed) == 6)
        #expect(pool.keptCount == 3)
        #expect(rd_kafka_header_cnt(reused) == 3)
        for (index, header) in headers.enumerated() {
            var name: UnsafePointer<CChar>?
            var value: UnsafeRawPointer?
            var size = 0
            #expect(rd_kafka_header_get_all(reused, index, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR)
            #expect(name.map { String(cString: $0) } == header.name)
            if let expected = header.value {
                let bytes = value.map { Array(UnsafeRawBufferPointer(start: $0, count: size)) }
                #expect(bytes == expected)
            } else {
                #expect(value == nil)
            }
        }
        pool.give(reused)
    }
}
