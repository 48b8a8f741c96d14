import Collector
import FlowmeterModels
import Foundation
import Kafka
import RollupStore
import Rollups
import Sink
import TestSupport
import Testing

/// Collectors' watermarks through Kafka into the store: what the store says is complete is in it, a collector that
/// stopped says so, and the sink takes a watermark only for the partition it was read from.
@Suite struct WatermarkTests {
    @Test func whatTheStoreCallsCompleteIsInItAndAStoppedCollectorSaysSo() async throws {
        let fixture = try SinkFixture(partitions: 3)
        var configuration = CollectorConfiguration(
            keys: try IngestKeys(json: Data(#"{"ingestKeys": [{"key": "k-mark-0123456789", "apps": ["*"]}]}"#.utf8)))
        configuration.port = 0
        configuration.kafka = .brokers(fixture.kafka.bootstrapServers)
        configuration.salt = Array("watermark-test-salt".utf8)
        configuration.collectorID = "marked"
        configuration.rollupInterval = .seconds(3600)
        configuration.logLevel = .error
        let collector = try makeCollector(configuration: configuration)
        try collector.start()
        let port = collector.port
        let expected = try await HTTPTestClient.onThread { () throws -> Int64 in
            var total: Int64 = 0
            for index in 0..<12 {
                let count = 1 + index % 3
                total += Int64(count)
                let body =
                    #"{"id":"mark-\#(index)","sentAt":"\#(Date().formatted(.iso8601))","client":{"appID":"com.example.shop","#
                    + #""appVersion":"5.2.1","platform":"ios","installID":"I-\#(index % 4)"},"#
                    + #""events":[{"kind":"unknownType","widgetType":"hologram","count":\#(count),"#
                    + #""occurredAt":"\#(Date().addingTimeInterval(-5).formatted(.iso8601))"}]}"#
                let client = try HTTPTestClient(port: port, readTimeout: .seconds(15))
                defer { client.close() }
                let answer = try client.request(
                    "POST", "/v1/diagnostics",
                    headers: [("Content-Type", "application/json"), ("Authorization", "Bearer k-mark-0123456789")],
                    body: Array(body.utf8))
                try #require(answer.status == 202, "batch \(index) answered \(answer.status)")
            }
            return total
        }
        let answeredBy = Timestamp(Date())
        let sink = try fixture.makeSink(group: "marks-\(UUID().uuidString)")
        defer { sink.stop() }

        // Flush until the store holds a watermark at or after the last answer on every partition; at that point
        // every answered event must be in the store.
        let complete = try await until(timeout: .seconds(30)) { () async throws -> (FreshnessAssessment, Int64)? in
            await collector.flushRollups()
            _ = try await onThread { try sink.pollOnce() }
            let assessed = FreshnessAssessment(try fixture.store.freshness(), now: Timestamp(Date()))
            guard let mark = assessed.collectors.first, let upTo = mark.completeUpTo, upTo >= answeredBy else {
                return nil
            }
            return (assessed, try fixture.totals().events)
        }
        let (assessed, events) = try #require(complete)
        #expect(events == expected)
        #expect(assessed.collectors.map { $0.name } == ["marked"])
        #expect(assessed.collectors.first?.partitions == 3)
        #expect(assessed.collectors.first?.partitionsReported == 3)
        #expect(assessed.collectors.first?.status == .current)
        #expect(sink.counters.watermarks >= 3)

        // A clean stop sends a last watermark that says so on every partition.
        await collector.shutdown()
        let stopped = try await until(timeout: .seconds(20)) { () async throws -> FreshnessAssessment? in
            _ = try await onThread { try sink.pollOnce() }
            let assessed = FreshnessAssessment(try fixture.store.freshness(), now: Timestamp(Date()))
            return assessed.collectors.first?.status == .stopped ? assessed : nil
        }
        let final = try #require(stopped)
        #expect(final.completeUpTo.map { $0 >= answeredBy } == true)
        #expect(final.isComplete(endingAt: Timestamp(Date())))
    }

    @Test func theSinkTakesAWatermarkOnlyForThePartitionItWasReadFromAndOldMessagesStillApply() async throws {
        let fixture = try SinkFixture(partitions: 3)
        let now = Timestamp(Date())
        let right = CollectorWatermark(collector: "c1", partition: 2, partitions: 3, completeUpTo: now)
        let wrong = CollectorWatermark(collector: "c1", partition: 1, partitions: 3, completeUpTo: now)
        var factory = PartialFactory()
        let partial = factory.partial(events: 4)
        let producer = try fixture.kafka.makeProducer()
        // A partial rollup as collectors before watermarks sent it, a watermark on its own partition, and one
        // produced to partition 0 that claims partition 1.
        _ = try await producer.send(SinkFixture.message(partial))
        try await Self.send([(right, 2), (wrong, 0)], with: producer)
        _ = await producer.shutdown(timeout: .seconds(5))

        let sink = try fixture.makeSink(group: "partitions-\(UUID().uuidString)")
        defer { sink.stop() }
        #expect(try await drive(sink) { $0.applied >= 1 && $0.watermarks >= 1 && $0.badMessages >= 1 })
        #expect(try fixture.store.freshness().watermarks == [right])
        #expect(try fixture.totals().events == 4)
        let letters = try fixture.deadLetters()
        #expect(letters.count == 1)
        #expect((letters.first?["reason"] as? String)?.contains("read from partition 0") == true)
    }

    @Test func aFlushTheSpoolTookIsVouchedForOnlyAfterTheReplayDeliveredIt() async throws {
        let fixture = try SinkFixture(partitions: 3)
        var configuration = CollectorConfiguration(
            keys: try IngestKeys(json: Data(#"{"ingestKeys": [{"key": "k-spool-0123456789", "apps": ["*"]}]}"#.utf8)))
        configuration.port = 0
        configuration.kafka = .brokers(fixture.kafka.bootstrapServers)
        configuration.salt = Array("watermark-spool-salt".utf8)
        configuration.collectorID = "spooling"
        configuration.rollupInterval = .seconds(3600)
        configuration.spool = CollectorConfiguration.DiskSpool(directory: fixture.directory.file("spool"))
        configuration.responseDeadline = .seconds(2)
        configuration.logLevel = .error
        let collector = try makeCollector(configuration: configuration)
        try collector.start()
        // A flush while the brokers answer: the collector knows the topic's partitions from then on, so its
        // watermarks keep going out (into the producer's queue) while they are away.
        await collector.flushRollups()
        let port = collector.port
        let post = { @Sendable (indices: Range<Int>) async throws in
            try await HTTPTestClient.onThread {
                for index in indices {
                    let body =
                        #"{"id":"spool-mark-\#(index)","sentAt":"\#(Date().formatted(.iso8601))","client":{"appID":"com.example.shop","#
                        + #""appVersion":"5.2.1","platform":"ios","installID":"I-\#(index)"},"#
                        + #""events":[{"kind":"unknownType","widgetType":"hologram","count":2,"#
                        + #""occurredAt":"\#(Date().addingTimeInterval(-5).formatted(.iso8601))"}]}"#
                    let client = try HTTPTestClient(port: port, readTimeout: .seconds(15))
                    defer { client.close() }
                    let answer = try client.request(
                        "POST", "/v1/diagnostics",
                        headers: [
                            ("Content-Type", "application/json"), ("Authorization", "Bearer k-spool-0123456789"),
                        ],
                        body: Array(body.utf8))
                    try #require(answer.status == 202, "batch \(index) answered \(answer.status)")
                }
            }
        }
        try await post(0..<6)

        // Brokers away: a batch answered from the spool makes Kafka look down once its delivery stalls, and from then
        // on the flush goes to the spool. The flushes after it send watermarks into the producer's queue: they must
        // not claim the spooled flush, which only the replay delivers.
        try fixture.kafka.cluster.setBrokerDown(KafkaMockCluster.allBrokers)
        try await post(6..<7)
        try await Task.sleep(for: configuration.responseDeadline + .seconds(1))
        let beforeFlush = Timestamp(Date())
        await collector.flushRollups()
        let spooled = try await until(timeout: .seconds(20)) { collector.spooledRecords > 0 ? true : nil }
        #expect(spooled == true)
        for _ in 0..<3 {
            await collector.flushRollups()
            try await Task.sleep(for: .milliseconds(200))
        }
        // Back: the replay delivers the spool; only then do watermarks move past the spooled flush.
        try fixture.kafka.cluster.setBrokerUp(KafkaMockCluster.allBrokers)
        let replayed = try await until(timeout: .seconds(60)) { collector.spooledRecords == 0 ? true : nil }
        #expect(replayed == true)
        // Flushes go on as the interval would make them.
        let flushing = Task {
            while !Task.isCancelled {
                await collector.flushRollups()
                try? await Task.sleep(for: .milliseconds(500))
            }
        }
        defer { flushing.cancel() }

        let messages = try await fixture.kafka.consume(topic: KafkaFixture.rollupsTopic, timeout: .seconds(30)) {
            messages in
            let vouching = messages.compactMap { message -> Int? in
                guard case .watermark(let mark)? = try? RollupsTopicMessage(jsonBytes: message.value),
                    mark.completeUpTo >= beforeFlush
                else { return nil }
                return message.partition
            }
            return Set(vouching).count == 3
        }
        var partialOffsets: [Int: [Int64]] = [:]
        var firstVouching: [Int: Int64] = [:]
        for message in messages {
            switch try RollupsTopicMessage(jsonBytes: message.value) {
            case .partial:
                partialOffsets[message.partition, default: []].append(message.offset)
            case .watermark(let mark):
                if mark.completeUpTo >= beforeFlush, firstVouching[message.partition] == nil {
                    firstVouching[message.partition] = message.offset
                }
            }
        }
        #expect(firstVouching.count == 3, "every partition got a watermark past the spooled flush")
        #expect(!partialOffsets.isEmpty)
        for (partition, offsets) in partialOffsets {
            let vouching = try #require(firstVouching[partition])
            #expect(offsets.allSatisfy { $0 < vouching }, "partition \(partition): a watermark overtook the replay")
        }
        flushing.cancel()
        _ = await flushing.value
        await collector.shutdown()
    }

    /// Produces each watermark to the partition given with it.
    private static func send(_ marks: [(CollectorWatermark, Int)], with producer: KafkaProducer) async throws {
        let done = AsyncStream<Void>.makeStream()
        try producer.enqueueBatch(capacity: marks.count, completion: { _ in done.continuation.finish() }) { writer in
            for (mark, partition) in marks {
                try writer.append(
                    topic: KafkaFixture.rollupsTopic, partition: partition, key: mark.kafkaKey,
                    value: mark.jsonBytes())
            }
        }
        for await _ in done.stream {}
    }
}

/// One partial rollup at a time, with fresh ids.
private struct PartialFactory {
    var sequence = 0

    mutating func partial(events: Int64) -> PartialRollup {
        sequence += 1
        let start = MinuteWindow(containing: Timestamp(Date())).start
        return PartialRollup(
            id: "old-collector-0/\(sequence)/0", collector: "old-collector",
            rollup: .series(
                SeriesRollup(
                    series: RollupSeries(
                        appID: "com.example.shop", platform: "ios", appVersion: "5.2.1", buildConfiguration: .release,
                        kind: .unknownType, widgetType: "hologram"),
                    window: MinuteWindow(start: start), events: events, installs: HyperLogLog(),
                    firstSeen: Timestamp(secondsSinceEpoch: start), lastSeen: Timestamp(secondsSinceEpoch: start),
                    releases: [:], samples: [])))
    }
}

/// Runs `step` until it returns a value or `timeout` passes.
private func until<Value: Sendable>(
    timeout: Duration, _ step: @Sendable () async throws -> Value?
) async throws -> Value? {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if let value = try await step() { return value }
        try await Task.sleep(for: .milliseconds(100))
    }
    return nil
}
