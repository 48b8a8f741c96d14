import CRdKafka

/// The `rd_kafka_produceva` argument list for messages that share a topic, headers and copy mode, laid out once:
/// each message then sets only its key, value, partition, opaque and timestamp.
///
/// Building the list per message cost a C string per header and a retain and release of every header's strings
/// and bytes, and naming the topic by string made librdkafka look it up under a lock per message. Here the topic
/// is a handle made once and the header bytes live in one block the template owns (librdkafka copies headers into
/// every message, so they need to outlive only the call).
///
/// With a ``RDKafkaHeaderPool`` (a producer's client has one per set of headers) the headers go as one ready-made
/// list per message, taken from the pool and given back by the message's delivery report, so librdkafka builds
/// and frees no list per message; without one, they go one by one and librdkafka builds the list.
///
/// Not thread-safe: the argument list is mutated per message, so one template belongs to one enqueuing thread (a
/// ``KafkaBatchWriter``). It holds its client, so the topic handle is destroyed before the client's handle.
final class RDKafkaMessageTemplate {
    let topic: String
    let headers: [KafkaHeader]
    let copies: Bool
    /// Where each message's header list comes from and goes back to; nil when librdkafka builds the lists.
    let headerPool: RDKafkaHeaderPool?

    private let client: RDKafkaClient
    private let topicHandle: OpaquePointer
    private let bytes: UnsafeMutableRawBufferPointer
    private let arguments: UnsafeMutablePointer<rd_kafka_vu_t>
    private let argumentCount: Int

    // Fixed positions of the per-message entries; headers follow them.
    private static let valueIndex = 1
    private static let keyIndex = 2
    private static let opaqueIndex = 3
    private static let partitionIndex = 5
    private static let timestampIndex = 6
    private static let fixedCount = 7

    /// Makes the template; throws what `rd_kafka_topic_new` reports (an invalid topic name).
    init(client: RDKafkaClient, topic: String, headers: [KafkaHeader], copies: Bool) throws(KafkaError) {
        guard let topicHandle = rd_kafka_topic_new(client.handle, topic, nil) else {
            throw RDKafkaError.make(rd_kafka_last_error())
        }
        self.client = client
        self.topic = topic
        self.headers = headers
        self.copies = copies
        self.topicHandle = topicHandle
        self.headerPool = headers.isEmpty ? nil : client.headerPool(for: headers)
        // Each header: its name with a terminating NUL, then its value; nothing when the pool's lists carry them.
        let size =
            headerPool != nil ? 0 : headers.reduce(0) { $0 + $1.name.utf8.count + 1 + ($1.value?.count ?? 0) }
        self.bytes = .allocate(byteCount: max(1, size), alignment: 1)
        self.argumentCount = Self.fixedCount + (headerPool == nil ? headers.count : 1)
        self.arguments = .allocate(capacity: argumentCount)
        arguments.initialize(repeating: rd_kafka_vu_t(), count: argumentCount)

        var entry = rd_kafka_vu_t()
        entry.vtype = RD_KAFKA_VTYPE_RKT
        entry.u.rkt = topicHandle
        arguments[0] = entry
        entry = rd_kafka_vu_t()
        entry.vtype = RD_KAFKA_VTYPE_VALUE
        arguments[Self.valueIndex] = entry
        entry.vtype = RD_KAFKA_VTYPE_KEY
        arguments[Self.keyIndex] = entry
        entry = rd_kafka_vu_t()
        entry.vtype = RD_KAFKA_VTYPE_OPAQUE
        arguments[Self.opaqueIndex] = entry
        entry = rd_kafka_vu_t()
        entry.vtype = RD_KAFKA_VTYPE_MSGFLAGS
        // Without F_COPY (and without F_FREE) librdkafka points at the caller's bytes and never frees them.
        entry.u.i = copies ? RD_KAFKA_MSG_F_COPY : 0
        arguments[4] = entry
        entry = rd_kafka_vu_t()
        entry.vtype = RD_KAFKA_VTYPE_PARTITION
        entry.u.i32 = RD_KAFKA_PARTITION_UA
        arguments[Self.partitionIndex] = entry
        entry = rd_kafka_vu_t()
        entry.vtype = RD_KAFKA_VTYPE_TIMESTAMP
        arguments[Self.timestampIndex] = entry
        if headerPool != nil {
            entry = rd_kafka_vu_t()
            entry.vtype = RD_KAFKA_VTYPE_HEADERS
            arguments[Self.fixedCount] = entry
            return
        }

        var offset = 0
        for (position, header) in headers.enumerated() {
            let name = bytes.baseAddress! + offset
            let nameBytes = UnsafeMutableRawBufferPointer(rebasing: bytes[offset..<offset + header.name.utf8.count])
            nameBytes.copyBytes(from: header.name.utf8)
            offset += header.name.utf8.count
            bytes[offset] = 0
            offset += 1
            var value: UnsafeMutableRawPointer?
            if let headerValue = header.value {
                value = bytes.baseAddress! + offset
                UnsafeMutableRawBufferPointer(rebasing: bytes[offset..<offset + headerValue.count])
                    .copyBytes(from: headerValue)
                offset += headerValue.count
            }
            entry = rd_kafka_vu_t()
            entry.vtype = RD_KAFKA_VTYPE_HEADER
            // A nil value is a header without one (size -1); an empty value keeps a non-nil pointer, size 0.
            entry.u.header = .init(
                name: name.assumingMemoryBound(to: CChar.self), val: value,
                size: header.value.map { $0.count } ?? -1)
            arguments[Self.fixedCount + position] = entry
        }
    }

    deinit {
        rd_kafka_topic_destroy(topicHandle)
        arguments.deallocate()
        bytes.deallocate()
    }

    /// Whether messages to `topic` with `headers` and `copies` can use this template; cheap when the strings and
    /// arrays are the same instances, as they are within one batch.
    func matches(topic: String, headers: [KafkaHeader], copies: Bool) -> Bool {
        copies == self.copies && topic == self.topic && headers == self.headers
    }

    /// Enqueues one message; `partition` nil lets the partitioner choose by key. Never blocks.
    ///
    /// `timestamp` is the message's create time in milliseconds since the epoch; 0 lets librdkafka read the clock
    /// (a `gettimeofday` per message, which a batch saves by reading it once).
    func produce(
        key: UnsafeRawBufferPointer?, value: UnsafeRawBufferPointer, partition: Int32?,
        timestamp: Int64, opaque: UnsafeMutableRawPointer
    ) throws(KafkaError) {
        arguments[Self.valueIndex].u.mem = .init(
            ptr: UnsafeMutableRawPointer(mutating: value.baseAddress), size: value.count)
        arguments[Self.keyIndex].u.mem = .init(
            ptr: UnsafeMutableRawPointer(mutating: key?.baseAddress), size: key?.count ?? 0)
        arguments[Self.opaqueIndex].u.ptr = opaque
        arguments[Self.partitionIndex].u.i32 = partition ?? RD_KAFKA_PARTITION_UA
        arguments[Self.timestampIndex].u.i64 = timestamp
        let list = headerPool?.take()
        if let list { arguments[Self.fixedCount].u.headers = list }
        if let error = rd_kafka_produceva(client.handle, arguments, argumentCount) {
            // A refused message leaves its list with the caller.
            if let list { headerPool?.give(list) }
            throw RDKafkaError.consume(error)
        }
    }
}
