import Kafka

extension KafkaProducer {
    /// Enqueues every record of `batch` to its topic with `headers`, librdkafka reading the keys and values in place
    /// from the batch's ``RecordBlock``, which the batch holds until `completion` has run: no copy per message.
    ///
    /// `enqueued` counts the records put on the queue, also when an append throws (`queueFull`, a producer being
    /// rebuilt), which is rethrown; `completion` runs once, as for ``KafkaProducer/enqueueBatch(capacity:owner:recordsReports:completion:_:)``.
    func enqueueBorrowing(
        _ batch: SpoolBatch, headers: [KafkaHeader], enqueued: inout Int,
        completion: @escaping @Sendable (KafkaBatchOutcome) -> Void
    ) throws {
        var count = 0
        defer { enqueued = count }
        try enqueueBatch(capacity: batch.count, owner: batch.block, completion: completion) { writer in
            for index in 0..<batch.count {
                try writer.appendBorrowing(
                    topic: batch.topic, key: batch.key(index), value: batch.value(index), headers: headers)
                count += 1
            }
        }
    }
}
