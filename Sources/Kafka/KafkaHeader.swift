/// A Kafka message header: a name and bytes, such as `content-type: application/json`.
public struct KafkaHeader: Sendable, Hashable {
    /// The header's name; Kafka allows repeats.
    public var name: String
    /// The header's value; `nil` is a header with no value, distinct from an empty one.
    public var value: [UInt8]?

    /// Makes a header with a byte value.
    public init(name: String, value: [UInt8]?) {
        self.name = name
        self.value = value
    }

    /// Makes a header whose value is the UTF-8 of a string.
    public init(name: String, value: String) {
        self.name = name
        self.value = Array(value.utf8)
    }
}

extension KafkaHeader {
    /// The headers every Flowmeter topic's values carry (docs/api.md#kafka-topics): `content-type: application/json` and
    /// `schema: <topic>`.
    public static func json(schema topic: String) -> [KafkaHeader] {
        [KafkaHeader(name: "content-type", value: "application/json"), KafkaHeader(name: "schema", value: topic)]
    }
}
