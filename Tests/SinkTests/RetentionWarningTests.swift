import Foundation
import Kafka
import Sink
import Synchronization
import TestSupport
import Testing

/// Records that retention removed before a sink counted them are lost, and the sink says so (docs/sink.md): a new
/// store on a topic whose first records are gone, and a stored offset retention has passed. librdkafka's mock cluster
/// keeps at most 5 MiB of message sets a partition and removes the oldest past that, as a broker's retention would;
/// filler records of 600 KB, each sent alone (its own message set), push the partition past it.
@Suite struct RetentionWarningTests {
    static let warning = "records were removed by retention before they were counted"

    @Test func aNewStoreOnATopicWhoseFirstRecordsAreGoneSaysSo() async throws {
        let fixture = try SinkFixture(partitions: 1)
        try await Self.publishFiller(fixture, records: 12)
        let (_, counted) = try await fixture.publishTraffic(batches: 10, installs: 5)
        let low = try Self.oldestOffset(fixture)
        #expect(low > 0)

        let warnings = Warnings()
        let sink = try fixture.makeSink(group: "retention-\(UUID().uuidString)", log: warnings.log)
        defer { sink.stop() }
        #expect(try await drive(sink) { $0.applied >= counted })
        #expect(
            warnings.all == [["partition": "0", "stored": "none", "oldest": String(low)]],
            "\(warnings.all)")
    }

    @Test func aStoredOffsetRetentionHasPassedSaysWhatWasLost() async throws {
        let fixture = try SinkFixture(partitions: 1)
        let (_, first) = try await fixture.publishTraffic(batches: 10, installs: 5)
        let earlier = try fixture.makeSink(group: "retention-\(UUID().uuidString)")
        #expect(try await drive(earlier) { $0.applied >= first })
        earlier.stop()
        let stored = try #require(try fixture.store.position(topic: KafkaFixture.batchesTopic, partition: 0).nextOffset)

        // While no sink runs, the partition moves on past retention.
        try await Self.publishFiller(fixture, records: 12)
        let (_, second) = try await fixture.publishTraffic(batches: 10, installs: 5, idPrefix: "later")
        let low = try Self.oldestOffset(fixture)
        #expect(low > stored)

        let warnings = Warnings()
        let sink = try fixture.makeSink(group: "retention-\(UUID().uuidString)", log: warnings.log)
        defer { sink.stop() }
        #expect(try await drive(sink) { $0.applied >= second })
        #expect(
            warnings.all == [["partition": "0", "stored": String(stored), "oldest": String(low)]],
            "\(warnings.all)")
    }

    /// Sends `records` filler records of 600 KB of random bytes (the producer compresses) to the batches topic, one
    /// at a time.
    static func publishFiller(_ fixture: SinkFixture, records: Int) async throws {
        let producer = try fixture.kafka.makeProducer()
        var generator = SeededGenerator(seed: 35)
        for index in 0..<records {
            let value = (0..<75_000).flatMap { _ in withUnsafeBytes(of: generator.next()) { Array($0) } }
            _ = try await producer.send(
                KafkaProducerMessage(
                    topic: KafkaFixture.batchesTopic, key: Array("filler-\(index)".utf8), value: value))
        }
        _ = await producer.shutdown(timeout: .seconds(5))
    }

    /// The oldest offset partition 0 of the batches topic still holds.
    static func oldestOffset(_ fixture: SinkFixture) throws -> Int64 {
        let consumer = try fixture.kafka.makeConsumer(topics: [KafkaFixture.batchesTopic])
        defer { consumer.close() }
        return try consumer.watermarks(topic: KafkaFixture.batchesTopic, partition: 0, timeout: .seconds(5)).low
    }

    /// A sink log that keeps the fields of every retention warning.
    final class Warnings: Sendable {
        private let fields = Mutex<[[String: String]]>([])

        var all: [[String: String]] { fields.withLock { $0 } }

        var log: RollupSink.Log {
            { [self] _, message, logged in
                if message == RetentionWarningTests.warning { fields.withLock { $0.append(logged) } }
            }
        }
    }
}
