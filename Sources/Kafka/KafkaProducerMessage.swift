/// A message for `KafkaProducer.send(_:)`: topic, optional key, value and headers.
public struct KafkaProducerMessage: Sendable, Hashable {
    /// The topic to write to; it must exist (topics are not created automatically by default).
    public var topic: String
    /// The key; messages with the same key go to the same partition, in order. `nil` spreads messages.
    public var key: [UInt8]?
    /// The payload.
    public var value: [UInt8]
    /// Headers such as `content-type` and `schema`.
    public var headers: [KafkaHeader]

    /// Makes a message.
    public init(topic: String, key: [UInt8]? = nil, value: [UInt8], headers: [KafkaHeader] = []) {
        self.topic = topic
        self.key = key
        self.value = value
        self.headers = headers
    }
}
