import CRdKafka

/// Owns one `rd_kafka_t`: made from properties, destroyed when the last reference goes.
///
/// librdkafka's handle is thread-safe, so any thread may call in; the owner decides who polls.
final class RDKafkaClient: @unchecked Sendable {
    enum Kind {
        case producer
        case consumer
    }

    let handle: OpaquePointer
    // Keep the callbacks' opaque alive as long as the handle.
    private let events: ProducerEvents?
    private let connection: ConnectionWatch?
    /// A producer's main queue, the one `rd_kafka_poll` serves, held to wake a poller waiting on it; nil for a
    /// consumer, which is polled through its own queue.
    private let mainQueue: OpaquePointer?

    private init(handle: OpaquePointer, events: ProducerEvents?, connection: ConnectionWatch?, kind: Kind) {
        self.handle = handle
        self.events = events
        self.connection = connection
        self.mainQueue = kind == .producer ? rd_kafka_queue_get_main(handle) : nil
    }

    deinit {
        if let mainQueue { rd_kafka_queue_destroy(mainQueue) }
        rd_kafka_destroy(handle)
    }

    /// Makes a `poll` that is waiting for a callback return now (or the next one return at once); from any thread.
    func wakePoller() {
        if let mainQueue { rd_kafka_queue_yield(mainQueue) }
    }

    /// The pool of header lists holding `headers` for this producer's messages; nil for a handle without
    /// ``ProducerEvents`` (whose reports could not give the lists back).
    func headerPool(for headers: [KafkaHeader]) -> RDKafkaHeaderPool? {
        events?.headerPool(for: headers)
    }

    /// Makes a handle; for a producer, `events` receives delivery reports, errors and statistics; for a consumer,
    /// `connection` receives the errors librdkafka reports on its own.
    static func make(
        _ kind: Kind, properties: [String: String], events: ProducerEvents? = nil, connection: ConnectionWatch? = nil
    ) throws -> RDKafkaClient {
        let configuration = try makeConfiguration(properties)
        if let events {
            RDKafkaCallbacks.install(on: configuration, events: events)
        } else if let connection {
            RDKafkaCallbacks.install(on: configuration, connection: connection)
        }
        if kind == .producer && RDKafkaPartitioner.applies(to: properties) {
            RDKafkaPartitioner.install(on: configuration)
        }
        var buffer = [CChar](repeating: 0, count: 512)
        let type = kind == .producer ? RD_KAFKA_PRODUCER : RD_KAFKA_CONSUMER
        // On success the handle owns the configuration; on failure it is still ours to destroy.
        guard let handle = rd_kafka_new(type, configuration, &buffer, buffer.count) else {
            rd_kafka_conf_destroy(configuration)
            throw KafkaError(.invalidArgument, RDKafkaError.string(from: buffer), isRetriable: false)
        }
        return RDKafkaClient(handle: handle, events: events, connection: connection, kind: kind)
    }

    /// Builds an `rd_kafka_conf_t`; the caller owns it.
    static func makeConfiguration(_ properties: [String: String]) throws -> OpaquePointer {
        let configuration = rd_kafka_conf_new()!
        var buffer = [CChar](repeating: 0, count: 512)
        for (key, value) in properties.sorted(by: { $0.key < $1.key }) {
            if rd_kafka_conf_set(configuration, key, value, &buffer, buffer.count) != RD_KAFKA_CONF_OK {
                rd_kafka_conf_destroy(configuration)
                // A secret's value is neither quoted nor left in librdkafka's message.
                let message = KafkaClientOptions.redacting(value, in: RDKafkaError.string(from: buffer), for: key)
                throw KafkaError(
                    .invalidArgument, "\(key)=\(KafkaClientOptions.printable(value, for: key)): \(message)",
                    isRetriable: false)
            }
        }
        return configuration
    }

    /// The number of partitions of `topic`, from a metadata request that waits up to `milliseconds`.
    func partitionCount(topic: String, milliseconds: Int32) throws(KafkaError) -> Int {
        guard let topicHandle = rd_kafka_topic_new(handle, topic, nil) else {
            throw RDKafkaError.make(rd_kafka_last_error())
        }
        defer { rd_kafka_topic_destroy(topicHandle) }
        var metadata: UnsafePointer<rd_kafka_metadata>?
        let error = rd_kafka_metadata(handle, 0, topicHandle, &metadata, milliseconds)
        guard error == RD_KAFKA_RESP_ERR_NO_ERROR, let metadata else { throw RDKafkaError.make(error) }
        defer { rd_kafka_metadata_destroy(metadata) }
        guard metadata.pointee.topic_cnt > 0, let topics = metadata.pointee.topics else {
            throw RDKafkaError.make(RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC)
        }
        guard topics[0].err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw RDKafkaError.make(topics[0].err) }
        return Int(topics[0].partition_cnt)
    }

    /// Serves queued callbacks, waiting up to `milliseconds` for one; returns how many were served.
    @discardableResult
    func poll(milliseconds: Int32) -> Int32 {
        rd_kafka_poll(handle, milliseconds)
    }

    /// Waits up to `milliseconds` for every message to be reported, serving callbacks; returns what is left.
    func flush(milliseconds: Int32) -> Int {
        _ = rd_kafka_flush(handle, milliseconds)
        return outqLength
    }

    /// Fails every queued and in-flight message; their reports arrive with purge errors on the next polls.
    func purgeAll() {
        _ = rd_kafka_purge(handle, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT)
    }

    /// Messages and callbacks not yet served: queued, in flight, or awaiting their report.
    var outqLength: Int {
        Int(rd_kafka_outq_len(handle))
    }

    /// Whether the handle has raised a fatal error and must be replaced.
    var hasFatalError: Bool {
        rd_kafka_fatal_error(handle, nil, 0) != RD_KAFKA_RESP_ERR_NO_ERROR
    }

    /// Raises a fabricated fatal error (librdkafka's test hook), as if the idempotent producer had failed.
    func triggerFatalError(_ code: KafkaError.Code, reason: String) -> KafkaError.Code {
        KafkaError.Code(rd_kafka_test_fatal_error(handle, code.rdKafkaValue, reason))
    }
}
