import CRdKafka
import Foundation

extension RDKafkaClient {
    /// Sends the handle's events to the consumer queue, so `consumerPoll` serves them; call once after making it.
    func redirectEventsToConsumer() {
        _ = rd_kafka_poll_set_consumer(handle)
    }

    func subscribe(topics: [String]) throws(KafkaError) {
        let list = rd_kafka_topic_partition_list_new(Int32(topics.count))
        defer { rd_kafka_topic_partition_list_destroy(list) }
        for topic in topics {
            rd_kafka_topic_partition_list_add(list, topic, RD_KAFKA_PARTITION_UA)
        }
        let error = rd_kafka_subscribe(handle, list)
        if error != RD_KAFKA_RESP_ERR_NO_ERROR {
            throw RDKafkaError.make(error)
        }
    }

    /// Waits up to `milliseconds` for one message; `nil` when none came or the event was not a message.
    ///
    /// Transient errors (a broker away, the end of a partition) are skipped; permanent ones throw. Errors about the
    /// connection (TLS, SASL, brokers down) go to `connection`, and so does the good news of a message.
    func consumerPoll(milliseconds: Int32, connection: ConnectionWatch) throws(KafkaError) -> KafkaConsumerMessage? {
        guard let message = rd_kafka_consumer_poll(handle, milliseconds) else { return nil }
        defer { rd_kafka_message_destroy(message) }
        let error = message.pointee.err
        if error != RD_KAFKA_RESP_ERR_NO_ERROR {
            // An error event carries librdkafka's sentence (which broker, what failed) in place of a payload.
            let made = RDKafkaError.make(error, reason: rd_kafka_message_errstr(message).map { String(cString: $0) })
            connection.reported(made)
            if made.code.isPermanent {
                throw made
            }
            return nil
        }
        connection.answered()
        return Self.convert(message)
    }

    private static func convert(_ message: UnsafeMutablePointer<rd_kafka_message_t>) -> KafkaConsumerMessage {
        let raw = message.pointee
        let topic = raw.rkt.map { String(cString: rd_kafka_topic_name($0)) } ?? ""
        let key = raw.key.map { Array(UnsafeRawBufferPointer(start: $0, count: raw.key_len)) }
        let value = raw.payload.map { Array(UnsafeRawBufferPointer(start: $0, count: raw.len)) } ?? []
        var timestampType = RD_KAFKA_TIMESTAMP_NOT_AVAILABLE
        let milliseconds = rd_kafka_message_timestamp(message, &timestampType)
        let timestamp =
            milliseconds >= 0 ? Date(timeIntervalSince1970: Double(milliseconds) / 1000) : nil
        return KafkaConsumerMessage(
            topic: topic,
            partition: Int(raw.partition),
            offset: raw.offset,
            key: key,
            value: value,
            headers: headers(of: message),
            timestamp: timestamp
        )
    }

    private static func headers(of message: UnsafeMutablePointer<rd_kafka_message_t>) -> [KafkaHeader] {
        var list: OpaquePointer?
        guard rd_kafka_message_headers(message, &list) == RD_KAFKA_RESP_ERR_NO_ERROR, let list else { return [] }
        var headers: [KafkaHeader] = []
        var index = 0
        var name: UnsafePointer<CChar>?
        var value: UnsafeRawPointer?
        var size = 0
        while rd_kafka_header_get_all(list, index, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR {
            let bytes = value.map { Array(UnsafeRawBufferPointer(start: $0, count: size)) }
            headers.append(KafkaHeader(name: name.map { String(cString: $0) } ?? "", value: bytes))
            index += 1
        }
        return headers
    }

    /// Commits the offsets of every message polled so far, synchronously.
    func commitPolled() throws(KafkaError) {
        let error = rd_kafka_commit(handle, nil, 0)
        // Nothing new since the last commit is not a failure.
        if error != RD_KAFKA_RESP_ERR_NO_ERROR && error != RD_KAFKA_RESP_ERR__NO_OFFSET {
            throw RDKafkaError.make(error)
        }
    }

    /// Moves the fetch position of an assigned partition to `offset` (negative: librdkafka's logical offsets);
    /// messages fetched from the old position are not returned any more.
    func seek(topic: String, partition: Int, offset: Int64, milliseconds: Int32) throws(KafkaError) {
        let list = rd_kafka_topic_partition_list_new(1)
        defer { rd_kafka_topic_partition_list_destroy(list) }
        let entry = rd_kafka_topic_partition_list_add(list, topic, Int32(partition))!
        entry.pointee.offset = offset
        if let error = rd_kafka_seek_partitions(handle, list, milliseconds) {
            throw RDKafkaError.consume(error)
        }
        let result = entry.pointee.err
        if result != RD_KAFKA_RESP_ERR_NO_ERROR { throw RDKafkaError.make(result) }
    }

    /// The partitions assigned to this member now, as (topic, partition).
    func assignment() throws(KafkaError) -> [(topic: String, partition: Int)] {
        var list: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?
        let error = rd_kafka_assignment(handle, &list)
        guard error == RD_KAFKA_RESP_ERR_NO_ERROR, let list else { throw RDKafkaError.make(error) }
        defer { rd_kafka_topic_partition_list_destroy(list) }
        var result: [(topic: String, partition: Int)] = []
        for index in 0..<Int(list.pointee.cnt) {
            let element = list.pointee.elems[index]
            result.append((String(cString: element.topic), Int(element.partition)))
        }
        return result
    }

    /// The low and high watermark of a partition as the last fetch saw them (no request); nil when not known.
    func cachedWatermarks(topic: String, partition: Int) -> (low: Int64, high: Int64)? {
        var low: Int64 = -1
        var high: Int64 = -1
        let error = rd_kafka_get_watermark_offsets(handle, topic, Int32(partition), &low, &high)
        guard error == RD_KAFKA_RESP_ERR_NO_ERROR, high >= 0 else { return nil }
        return (low, high)
    }

    /// The low and high watermark of a partition, asked of its leader (waits up to `milliseconds`).
    func queryWatermarks(topic: String, partition: Int, milliseconds: Int32) throws(KafkaError) -> (
        low: Int64, high: Int64
    ) {
        var low: Int64 = -1
        var high: Int64 = -1
        let error = rd_kafka_query_watermark_offsets(handle, topic, Int32(partition), &low, &high, milliseconds)
        guard error == RD_KAFKA_RESP_ERR_NO_ERROR else { throw RDKafkaError.make(error) }
        return (low, high)
    }

    /// Leaves the group and stops fetching; the handle is destroyed when released.
    func closeConsumer() {
        _ = rd_kafka_consumer_close(handle)
    }
}
