public import Foundation

/// A message read by `KafkaConsumer.poll(maxMessages:timeout:)`.
public struct KafkaConsumerMessage: Sendable, Hashable {
    /// The topic it was read from.
    public var topic: String
    /// Its partition.
    public var partition: Int
    /// Its offset in the partition.
    public var offset: Int64
    /// Its key, or `nil` when produced without one.
    public var key: [UInt8]?
    /// Its payload.
    public var value: [UInt8]
    /// Its headers in the order they were written.
    public var headers: [KafkaHeader]
    /// The producer's create time or the broker's log-append time, when the message carries one.
    public var timestamp: Date?

    /// The value of the first header with this name, or `nil`.
    public func header(named name: String) -> [UInt8]? {
        headers.first { $0.name == name }?.value
    }
}
