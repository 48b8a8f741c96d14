import Kafka
import Synchronization
import TestSupport

/// Collects batch outcomes from completions (which run on the producer's poll thread) for a test to wait on.
final class DeliveryLog: Sendable {
    private let entries = Mutex<[(ids: [Int], outcome: KafkaBatchOutcome)]>([])

    /// A completion that records the outcome of the batch holding `ids`, in append order.
    func completion(for ids: [Int]) -> @Sendable (KafkaBatchOutcome) -> Void {
        { [self] outcome in entries.withLock { $0.append((ids, outcome)) } }
    }

    var outcomes: [KafkaBatchOutcome] { entries.withLock { $0.map(\.outcome) } }
    var persisted: Int { outcomes.reduce(0) { $0 + $1.persisted } }
    var failures: [KafkaDeliveryReport] { outcomes.flatMap(\.failures) }

    /// The ids whose delivery failed, found through each failure's index in its batch.
    var failedIDs: [Int] {
        entries.withLock { entries in
            entries.flatMap { entry in entry.outcome.failures.map { entry.ids[$0.index] } }
        }
    }

    /// Waits until `batches` completions have arrived or `timeout` passes; returns whether they did.
    func waitFor(batches: Int, timeout: Duration = Eventually.hangGuard) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while entries.withLock({ $0.count }) < batches {
            if ContinuousClock.now >= deadline { return false }
            try await Task.sleep(for: .milliseconds(20))
        }
        return true
    }
}

/// The test events: value `event-<id>` under one of 16 keys, with Flowmeter's two headers.
enum TestEvents {
    static let headers = [
        KafkaHeader(name: "content-type", value: "application/json"),
        KafkaHeader(name: "schema", value: "flowmeter.events.v1"),
    ]

    static func key(_ id: Int) -> [UInt8] { Array("key-\(id % 16)".utf8) }

    static func id(of message: KafkaConsumerMessage) -> Int? {
        Int(String(decoding: message.value.dropFirst("event-".count), as: UTF8.self))
    }

    /// Enqueues `ids` as one batch through a reused value buffer, as the collector does.
    static func enqueue(_ ids: [Int], to producer: KafkaProducer, topic: String, log: DeliveryLog) throws {
        var buffer: [UInt8] = []
        try producer.enqueueBatch(capacity: ids.count, completion: log.completion(for: ids)) { batch in
            for id in ids {
                buffer.removeAll(keepingCapacity: true)
                buffer.append(contentsOf: "event-\(id)".utf8)
                try batch.append(topic: topic, key: key(id), value: buffer, headers: headers)
            }
        }
    }

    /// Produces `ids` in batches, then re-produces every retriable failure, as the collector does, until all are
    /// persisted or the bound passes. Returns how many deliveries were persisted and how many ids were re-produced.
    static func produceReliably(
        _ ids: [Int],
        to producer: KafkaProducer,
        topic: String,
        batchSize: Int = 500,
        timeout: Duration = Eventually.hangGuard,
        beforeBatch: (Int) throws -> Void = { _ in }
    ) async throws -> (persisted: Int, retried: Int, permanentFailures: Int) {
        var pending = ids
        var persisted = 0
        var retried = 0
        var permanent = 0
        let deadline = ContinuousClock.now + timeout
        while !pending.isEmpty && ContinuousClock.now < deadline {
            let log = DeliveryLog()
            var batchCount = 0
            for start in stride(from: 0, to: pending.count, by: batchSize) {
                try beforeBatch(batchCount)
                try enqueue(
                    Array(pending[start..<min(start + batchSize, pending.count)]), to: producer, topic: topic, log: log)
                batchCount += 1
            }
            guard try await log.waitFor(batches: batchCount, timeout: deadline - .now) else { break }
            persisted += log.persisted
            permanent += log.failures.filter { $0.error?.isRetriable != true }.count
            pending = log.failedIDs
            retried += pending.count
        }
        return (persisted, retried, permanent)
    }
}
