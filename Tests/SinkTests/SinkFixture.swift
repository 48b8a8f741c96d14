import FlowmeterModels
import FlowmeterWire
import Foundation
import Kafka
import RollupStore
import Rollups
import Sink
import TestSupport

/// A mock cluster and a store (SQLite unless told otherwise) for sink tests, with the collector side (batch records
/// published to the batches topic as collectors write them) and helpers to drive sinks and read totals.
final class SinkFixture: Sendable {
    let kafka: KafkaFixture
    let directory: TemporaryDirectory
    let store: any RollupStore

    init(partitions: Int = 3, store kind: SinkStoreKind = .sqlite) throws {
        kafka = try KafkaFixture(partitions: partitions)
        directory = try TemporaryDirectory(prefix: "flowmeter-sink")
        store = try kind.makeStore(in: directory)
    }

    deinit {
        directory.remove()
    }

    /// Publishes `batches` batch records (batch `i` from install `i % installs`, four events of counts 1…3) as
    /// collectors write them, and returns the events' total count and the number of records.
    func publishTraffic(
        batches: Int, installs: Int, idPrefix: String = "batch"
    ) async throws -> (events: Int64, messages: Int) {
        let now = Int64(Date().timeIntervalSince1970)
        var events: Int64 = 0
        let producer = try kafka.makeProducer()
        var messages = 0
        for index in 0..<batches {
            let batch = Self.events(index: index, now: now)
            events += batch.reduce(0) { $0 + Int64($1.count) }
            for message in Self.messages(
                batchID: "\(idPrefix)-\(index)", client: Self.client(index: index), events: batch,
                installHash: Self.installHash(index % installs), receivedAt: Timestamp(secondsSinceEpoch: now))
            {
                _ = try await producer.send(message)
                messages += 1
            }
        }
        _ = await producer.shutdown(timeout: .seconds(5))
        return (events, messages)
    }

    /// The app build of batch `index`.
    static func client(index: Int) -> ClientInfo {
        ClientInfo(
            appID: "com.example.shop", appVersion: index % 2 == 0 ? "5.2.1" : "5.3.0",
            build: index % 2 == 0 ? "5210" : "5300", platform: "ios", buildConfiguration: .release)
    }

    /// The four events of batch `index`.
    static func events(index: Int, now: Int64) -> [DiagnosticEvent] {
        (0..<4).map { event in
            DiagnosticEvent(
                kind: .unknownType, widgetType: "type-\(event)", count: 1 + (index + event) % 3,
                occurredAt: Timestamp(secondsSinceEpoch: now - Int64(index % 3) * 60))
        }
    }

    /// The records of one batch as a collector writes them (in parts when larger than `maxRecordBytes`).
    static func records(
        batchID: String, client: ClientInfo, events: [DiagnosticEvent], installHash: String?, receivedAt: Timestamp,
        collector: String = "collector-a", decodes: Int? = 10, maxRecordBytes: Int = 1_000_000
    ) -> (key: [UInt8], values: [[UInt8]]) {
        let writer = BatchRecordWriter(
            batch: BatchRecordWriter.Batch(
                batchID: batchID, client: client, installHash: installHash, decodes: decodes, clientReport: nil,
                receivedAt: receivedAt, skewMillis: 0, collector: collector, dropped: 0),
            table: EventTable(events), positions: Array(events.indices), maxRecordBytes: maxRecordBytes)
        let values = writer.parts.indices.map { part in
            var bytes = [UInt8](repeating: 0, count: writer.maxLength(part: part))
            let length = bytes.withUnsafeMutableBytes { writer.write(part: part, into: $0) }
            return Array(bytes[..<length])
        }
        return (writer.keyBytes, values)
    }

    /// The messages of one batch for the batches topic, keyed and with headers as collectors write them.
    static func messages(
        batchID: String, client: ClientInfo, events: [DiagnosticEvent], installHash: String?, receivedAt: Timestamp,
        collector: String = "collector-a"
    ) -> [KafkaProducerMessage] {
        let (key, values) = records(
            batchID: batchID, client: client, events: events, installHash: installHash, receivedAt: receivedAt,
            collector: collector)
        return values.map { value in
            KafkaProducerMessage(
                topic: KafkaFixture.batchesTopic, key: key, value: value,
                headers: [
                    KafkaHeader(name: "content-type", value: "application/json"),
                    KafkaHeader(name: "schema", value: KafkaFixture.batchesTopic),
                ])
        }
    }

    /// How many partitions of the batches topic the store holds a position for, past offset 0.
    func partitionsWithData(_ partitions: Int = 3) throws -> Int {
        try (0..<partitions).filter {
            (try store.position(topic: KafkaFixture.batchesTopic, partition: $0).nextOffset ?? 0) > 0
        }.count
    }

    /// A 32-hex install hash for install number `index`.
    static func installHash(_ index: Int) -> String {
        var generator = SeededGenerator(seed: UInt64(index) &+ 1)
        return (0..<2).map { _ in
            let hex = String(generator.next(), radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
    }

    /// Where the fixture's sinks write dead letters (inside its temporary directory).
    var deadLetterPath: String { directory.file("dead-letters.jsonl") }

    /// The dead letters written so far, one decoded JSON object per line.
    func deadLetters() throws -> [[String: Any]] {
        guard let data = FileManager.default.contents(atPath: deadLetterPath) else { return [] }
        return try data.split(separator: UInt8(ascii: "\n")).map { line in
            try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] ?? [:]
        }
    }

    /// A sink on the fixture's cluster and store in group `group`.
    func makeSink(
        group: String, store: (any SinkStore)? = nil,
        configure: (inout RollupSinkConfiguration) -> Void = { _ in },
        log: @escaping RollupSink.Log = { _, _, _ in }
    ) throws -> RollupSink {
        var configuration = RollupSinkConfiguration(bootstrapServers: kafka.bootstrapServers)
        configuration.deadLetterPath = deadLetterPath
        configuration.groupID = group
        configuration.pollTimeout = .milliseconds(200)
        configuration.sessionTimeout = .seconds(6)
        configuration.retryDelay = .milliseconds(50)
        configure(&configuration)
        return try RollupSink(configuration: configuration, store: store ?? self.store, log: log)
    }

    /// The store's totals over the last and next day: series events, version batches, and the installs estimate of
    /// the merged version rollups.
    func totals() throws -> (events: Int64, batches: Int64, installs: Double) {
        try Self.totals(of: store)
    }

    static func totals(of store: any RollupStore) throws -> (events: Int64, batches: Int64, installs: Double) {
        let now = Int64(Date().timeIntervalSince1970)
        let from = Timestamp(secondsSinceEpoch: now - 86_400), to = Timestamp(secondsSinceEpoch: now + 86_400)
        let series = try store.seriesRollups(SeriesQuery(from: from, to: to))
        let versions = try store.versionRollups(from: from, to: to, appID: nil)
        var installs = HyperLogLog()
        for version in versions { installs.merge(version.installs) }
        return (series.reduce(0) { $0 + $1.events }, versions.reduce(0) { $0 + $1.batches }, installs.estimate)
    }
}

/// Runs blocking work on a thread of its own, off the cooperative pool.
func onThread<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
    try await HTTPTestClient.onThread(work)
}

/// Polls `sink` (committing unless told not to) until `isDone` holds or `timeout` passes; returns whether it held.
func drive(
    _ sink: RollupSink, commit: Bool = true, timeout: Duration = Eventually.hangGuard,
    until isDone: @escaping @Sendable (RollupSinkCounters) -> Bool
) async throws -> Bool {
    try await onThread {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if isDone(sink.counters) { return true }
            try sink.pollOnce(commit: commit)
        }
        return isDone(sink.counters)
    }
}
