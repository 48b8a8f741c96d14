import CRdKafka
import Foundation
import TestSupport
import Testing

@testable import Kafka

/// The producer's partitioner: librdkafka's `consistent_random` rule with libdeflate's CRC-32, so every key lands
/// where librdkafka's own partitioner (zlib's CRC-32) would put it.
@Suite struct PartitionerTests {
    @Test func everyKeyGetsLibrdkafkasPartition() {
        var generator = SystemRandomNumberGenerator()
        for length in [1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 59, 63, 64, 65, 127, 128, 129, 255, 256, 1000, 4097] {
            for _ in 0..<40 {
                let key = (0..<length).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
                for partitions in [1, 2, 3, 6, 7, 12, 64, 1000, Int(Int32.max)] {
                    let count = Int32(partitions)
                    let ours = key.withUnsafeBytes { RDKafkaPartitioner.partition(key: $0, partitionCount: count) }
                    let librdkafkas = key.withUnsafeBytes {
                        rd_kafka_msg_partitioner_consistent(nil, $0.baseAddress, $0.count, count, nil, nil)
                    }
                    #expect(ours == librdkafkas, "key of \(length) bytes, \(partitions) partitions")
                }
            }
        }
        // Series keys as the collector writes them, and every byte value.
        let series = "com.example.shop|ios|4.12.0|release|unknownType|carousel.v2"
        for partitions: Int32 in [3, 6, 12] {
            let ours = Array(series.utf8).withUnsafeBytes {
                RDKafkaPartitioner.partition(key: $0, partitionCount: partitions)
            }
            let librdkafkas = Array(series.utf8).withUnsafeBytes {
                rd_kafka_msg_partitioner_consistent(nil, $0.baseAddress, $0.count, partitions, nil, nil)
            }
            #expect(ours == librdkafkas)
        }
        let bytes = (0...255).map { UInt8($0) }
        #expect(
            bytes.withUnsafeBytes { RDKafkaPartitioner.partition(key: $0, partitionCount: 6) }
                == bytes.withUnsafeBytes {
                    rd_kafka_msg_partitioner_consistent(nil, $0.baseAddress, $0.count, 6, nil, nil)
                })
    }

    @Test func onlyTheDefaultPartitionerIsReplaced() {
        #expect(RDKafkaPartitioner.applies(to: [:]))
        #expect(RDKafkaPartitioner.applies(to: ["partitioner": "consistent_random"]))
        #expect(!RDKafkaPartitioner.applies(to: ["partitioner": "murmur2_random"]))
        #expect(!RDKafkaPartitioner.applies(to: ["partitioner": "random"]))
    }

    @Test func keyedMessagesLandOnTheKeysPartitionAndCarryTheBatchsTime() async throws {
        let fixture = try KafkaFixture(partitions: 6)
        let producer = try fixture.makeProducer()
        #if DEBUG
            let callsBefore = RDKafkaPartitioner.keyedCalls.load(ordering: .relaxed)
        #endif
        let before = Date()
        let log = DeliveryLog()
        try TestEvents.enqueue(Array(0..<200), to: producer, topic: KafkaFixture.eventsTopic, log: log)
        #expect(try await log.waitFor(batches: 1))
        let after = Date()
        #expect(log.persisted == 200)
        #if DEBUG
            // Other tests produce at the same time, so at least this batch's messages, not exactly them.
            #expect(RDKafkaPartitioner.keyedCalls.load(ordering: .relaxed) - callsBefore >= 200)
        #endif
        #expect(await producer.shutdown(timeout: .seconds(5)) == 0)

        let consumed = try await fixture.consumeAll(topic: KafkaFixture.eventsTopic, expecting: 200)
        #expect(consumed.count == 200)
        for message in consumed {
            let key = try #require(message.key)
            let expected = key.withUnsafeBytes {
                rd_kafka_msg_partitioner_consistent(nil, $0.baseAddress, $0.count, 6, nil, nil)
            }
            #expect(message.partition == Int(expected))
            // One create time for the whole batch, read when the batch began (to the millisecond).
            let timestamp = try #require(message.timestamp)
            #expect(timestamp.timeIntervalSince(before) > -0.002 && timestamp.timeIntervalSince(after) < 0.002)
        }
        #expect(Set(consumed.compactMap(\.timestamp)).count == 1)
        // The keys spread: 16 keys over 6 partitions use more than one.
        #expect(Set(consumed.map(\.partition)).count > 1)
    }

    @Test func aConfiguredPartitionerIsLibrdkafkas() async throws {
        let fixture = try KafkaFixture(partitions: 6)
        let producer = try fixture.makeProducer { $0.additionalProperties["partitioner"] = "murmur2_random" }
        let log = DeliveryLog()
        try TestEvents.enqueue(Array(0..<100), to: producer, topic: KafkaFixture.eventsTopic, log: log)
        #expect(try await log.waitFor(batches: 1))
        #expect(await producer.shutdown(timeout: .seconds(5)) == 0)
        let consumed = try await fixture.consumeAll(topic: KafkaFixture.eventsTopic, expecting: 100)
        #expect(consumed.count == 100)
        var differsFromCRC = false
        for message in consumed {
            let key = try #require(message.key)
            let murmur = key.withUnsafeBytes {
                rd_kafka_msg_partitioner_murmur2(nil, $0.baseAddress, $0.count, 6, nil, nil)
            }
            let crc = key.withUnsafeBytes { RDKafkaPartitioner.partition(key: $0, partitionCount: 6) }
            #expect(message.partition == Int(murmur))
            if murmur != crc { differsFromCRC = true }
        }
        // Otherwise this test could not tell the two partitioners apart.
        #expect(differsFromCRC)
    }
}
