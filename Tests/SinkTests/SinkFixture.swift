import FlowmeterModels
import Foundation
import Kafka
import RollupStore
import Rollups
import Sink
import TestSupport

/// A mock cluster and a store (SQLite unless told otherwise) for sink tests, with the collector side (a `RollupAggregator` whose drains are
/// published to the rollups topic as the collector publishes them) and helpers to drive sinks and read totals.
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

    /// Records `batches` batches (batch `i` from install `i % installs`, four events of counts 1…3) into an
    /// aggregator, drains it in `flushes` flushes, publishes every partial rollup with the contract's key and
    /// headers, and returns the events' total count and the number of messages.
    func publishTraffic(batches: Int, installs: Int, flushes: Int = 2) async throws -> (events: Int64, messages: Int) {
        let aggregator = RollupAggregator(configuration: .init(collectorID: "sink-test"))
        let now = Int64(Date().timeIntervalSince1970)
        var events: Int64 = 0
        var partials: [PartialRollup] = []
        for index in 0..<batches {
            let client = ClientInfo(
                appID: "com.example.shop", appVersion: index % 2 == 0 ? "5.2.1" : "5.3.0", platform: "ios",
                buildConfiguration: .release)
            let batch = (0..<4).map { event in
                DiagnosticEvent(
                    kind: .unknownType, widgetType: "type-\(event)", count: 1 + (index + event) % 3,
                    occurredAt: Timestamp(secondsSinceEpoch: now - Int64(index % 3) * 60))
            }
            events += batch.reduce(0) { $0 + Int64($1.count) }
            aggregator.record(
                batch, client: client, decodes: 10, installHash: Self.installHash(index % installs),
                receivedAt: Timestamp(secondsSinceEpoch: now))
            if (index + 1) % max(1, batches / flushes) == 0 { partials += aggregator.drain() }
        }
        partials += aggregator.drain()
        let producer = try kafka.makeProducer()
        for partial in partials {
            _ = try await producer.send(Self.message(partial))
        }
        _ = await producer.shutdown(timeout: .seconds(5))
        return (events, partials.count)
    }

    /// A partial rollup as the collector publishes it.
    static func message(_ partial: PartialRollup) -> KafkaProducerMessage {
        KafkaProducerMessage(
            topic: KafkaFixture.rollupsTopic, key: partial.kafkaKey, value: partial.jsonBytes(),
            headers: [
                KafkaHeader(name: "content-type", value: "application/json"),
                KafkaHeader(name: "schema", value: KafkaFixture.rollupsTopic),
            ])
    }

    /// A 32-hex install hash for install number `index`.
    static func installHash(_ index: Int) -> String {
        var generator = SplitMix(seed: UInt64(index) &+ 1)
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
    func makeSink(group: String, store: (any RollupStore)? = nil) throws -> RollupSink {
        var configuration = RollupSinkConfiguration(bootstrapServers: kafka.bootstrapServers)
        configuration.deadLetterPath = deadLetterPath
        configuration.groupID = group
        configuration.pollTimeout = .milliseconds(200)
        configuration.sessionTimeout = .seconds(6)
        configuration.retryDelay = .milliseconds(50)
        return try RollupSink(configuration: configuration, store: store ?? self.store)
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

/// A tiny deterministic generator for install hashes.
struct SplitMix {
    var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
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
