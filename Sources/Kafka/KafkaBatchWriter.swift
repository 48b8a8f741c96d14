public import Foundation

/// Appends messages to one batch inside `KafkaProducer.enqueueBatch(capacity:recordsReports:completion:_:)`.
///
/// Every `append` copies the key, value and headers into librdkafka's queue and returns at once, so the caller may
/// reuse its buffers straight away. It never blocks: a full queue throws `KafkaError.Code.queueFull`.
public struct KafkaBatchWriter: ~Copyable {
    private let client: RDKafkaClient
    private let tracker: DeliveryTracker
    /// The argument list of the last topic and headers appended to, reused while they repeat (see
    /// ``RDKafkaMessageTemplate``).
    private var template: RDKafkaMessageTemplate?
    /// The create time every message of the batch carries, in milliseconds since the epoch: the wall clock read
    /// once when the batch starts, where librdkafka would read it for each message.
    private let timestamp: Int64
    /// How many messages this batch has enqueued so far.
    public private(set) var count = 0

    init(client: RDKafkaClient, tracker: DeliveryTracker) {
        self.client = client
        self.tracker = tracker
        self.timestamp = Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
    }

    /// Enqueues a keyed message; messages with the same key keep their order within one partition.
    ///
    /// Throws `queueFull` (retriable) when the local queue is at its cap, `fatal` (retriable) while the producer is
    /// replacing a failed handle, and `unknownTopic` and similar permanent errors at once; the batch keeps what was
    /// enqueued before the error.
    public mutating func append(
        topic: String,
        key: some ContiguousBytes,
        value: some ContiguousBytes,
        headers: [KafkaHeader] = []
    ) throws(KafkaError) {
        let error: KafkaError? = key.withUnsafeBytes { key in
            value.withUnsafeBytes { value in
                produce(topic: topic, key: key, value: value, headers: headers)
            }
        }
        if let error { throw error }
        count += 1
    }

    /// Enqueues a keyed message to one partition of `topic`, chosen by the caller rather than by the key.
    ///
    /// Throws as the keyed `append` does, and `unknownPartition` (permanent) for a partition the topic lacks.
    public mutating func append(
        topic: String,
        partition: Int,
        key: some ContiguousBytes,
        value: some ContiguousBytes,
        headers: [KafkaHeader] = []
    ) throws(KafkaError) {
        let error: KafkaError? = key.withUnsafeBytes { key in
            value.withUnsafeBytes { value in
                produce(topic: topic, partition: Int32(clamping: partition), key: key, value: value, headers: headers)
            }
        }
        if let error { throw error }
        count += 1
    }

    /// Enqueues a message whose key and value librdkafka reads in place, without copying them: for one block per
    /// batch holding every message, owned by the batch's `owner` (see `KafkaProducer.enqueueBatch`).
    ///
    /// The bytes must lie in memory `owner` keeps alive and nobody changes until the batch's completion has run;
    /// a nil `key` sends the message without one. Throws as the keyed `append` does.
    public mutating func appendBorrowing(
        topic: String,
        key: UnsafeRawBufferPointer?,
        value: UnsafeRawBufferPointer,
        headers: [KafkaHeader] = []
    ) throws(KafkaError) {
        precondition(tracker.owner != nil, "appendBorrowing needs a batch enqueued with an owner of the bytes")
        if let error = produce(topic: topic, key: key, value: value, headers: headers, copies: false) { throw error }
        count += 1
    }

    /// Enqueues a message without a key; the partitioner spreads such messages.
    public mutating func append(
        topic: String,
        value: some ContiguousBytes,
        headers: [KafkaHeader] = []
    ) throws(KafkaError) {
        let error: KafkaError? = value.withUnsafeBytes { value in
            produce(topic: topic, key: nil, value: value, headers: headers)
        }
        if let error { throw error }
        count += 1
    }

    private mutating func produce(
        topic: String,
        partition: Int32? = nil,
        key: UnsafeRawBufferPointer?,
        value: UnsafeRawBufferPointer,
        headers: [KafkaHeader],
        copies: Bool = true
    ) -> KafkaError? {
        let message: RDKafkaMessageTemplate
        do {
            message = try template(topic: topic, headers: headers, copies: copies)
        } catch {
            return error
        }
        let opaque = tracker.beginMessage(headerPool: message.headerPool)
        do {
            try message.produce(
                key: key, value: value, partition: partition, timestamp: timestamp, opaque: opaque)
            return nil
        } catch {
            tracker.abandonMessage()
            return error
        }
    }

    /// The argument list for `topic` and `headers`: the last one while they repeat, a new one when they change.
    private mutating func template(
        topic: String, headers: [KafkaHeader], copies: Bool
    ) throws(KafkaError) -> RDKafkaMessageTemplate {
        if let template, template.matches(topic: topic, headers: headers, copies: copies) { return template }
        let made = try RDKafkaMessageTemplate(client: client, topic: topic, headers: headers, copies: copies)
        template = made
        return made
    }
}
