import CDeflate
import CRdKafka
import Synchronization

/// librdkafka's default partitioner (`consistent_random`) with a faster CRC-32 of the key.
///
/// `consistent_random` sends a keyed message to `crc32(key) % partitions` and a keyless one to a random available
/// partition. librdkafka 2.0.2 takes that CRC-32 from zlib, whose `crc32_z` spent about 340 instructions (128 ns
/// measured) on a 59-byte series key, once per message on the enqueuing thread: about 2 % of the collector's CPU at
/// full load. libdeflate's `libdeflate_crc32` computes the same checksum (IEEE 802.3, the same polynomial and initial
/// value) with carry-less multiplies, in about 20 ns. Every key lands on the partition librdkafka would pick, so
/// producers with and without this callback, and other clients using `consistent_random`, agree on where a series
/// goes; keyless messages go through librdkafka's own function.
///
/// Installed only where the configuration leaves `partitioner` at its default: a configured partitioner (such as
/// `murmur2_random`, the Java client's) is left to librdkafka.
enum RDKafkaPartitioner {
    #if DEBUG
        /// Keyed messages partitioned by the callback: the tests' evidence that it, not librdkafka's own, ran.
        static let keyedCalls = Atomic<Int>(0)
    #endif

    /// librdkafka's name for the partitioner this replaces.
    static let replacedName = "consistent_random"

    /// Whether `properties` leave the choice to librdkafka's default, the partitioner this one matches.
    static func applies(to properties: [String: String]) -> Bool {
        guard let configured = properties["partitioner"] else { return true }
        return configured == replacedName
    }

    /// Sets the callback on the default topic configuration of `configuration` (made there if there is none), which
    /// every topic handle made without its own configuration copies.
    static func install(on configuration: OpaquePointer) {
        let topicConfiguration: OpaquePointer
        if let existing = rd_kafka_conf_get_default_topic_conf(configuration) {
            topicConfiguration = existing
        } else {
            topicConfiguration = rd_kafka_topic_conf_new()
            // The global configuration owns it from here.
            rd_kafka_conf_set_default_topic_conf(configuration, topicConfiguration)
        }
        rd_kafka_topic_conf_set_partitioner_cb(topicConfiguration, partitionCallback)
    }

    /// The partition for a key: the same as `rd_kafka_msg_partitioner_consistent`'s for any key and count.
    static func partition(key: UnsafeRawBufferPointer, partitionCount: Int32) -> Int32 {
        let checksum = libdeflate_crc32(0, key.baseAddress, key.count)
        return Int32(truncatingIfNeeded: checksum % UInt32(truncatingIfNeeded: partitionCount))
    }
}

/// The callback librdkafka calls on the enqueuing thread, with the topic's read lock held.
private func partitionCallback(
    _ topic: OpaquePointer?,
    _ key: UnsafeRawPointer?,
    _ keyLength: Int,
    _ partitionCount: Int32,
    _ topicOpaque: UnsafeMutableRawPointer?,
    _ messageOpaque: UnsafeMutableRawPointer?
) -> Int32 {
    // consistent_random's rule: no key bytes, a random available partition.
    guard keyLength > 0, let key, partitionCount > 0 else {
        return rd_kafka_msg_partitioner_consistent_random(
            topic, key, keyLength, partitionCount, topicOpaque, messageOpaque)
    }
    #if DEBUG
        RDKafkaPartitioner.keyedCalls.wrappingAdd(1, ordering: .relaxed)
    #endif
    return RDKafkaPartitioner.partition(
        key: UnsafeRawBufferPointer(start: key, count: keyLength), partitionCount: partitionCount)
}
