/// One Kafka message as the spool keeps it: topic, key, value, headers, and when it was accepted.
///
/// The owned form, for tests and for callers that keep a record; the replay reads ``SpoolRecordView``s over a read
/// buffer instead, without copying.
struct SpoolRecord: Sendable, Hashable {
    /// A message header: a name and bytes (`nil` is a header without a value, distinct from an empty one).
    struct Header: Sendable, Hashable {
        /// The header's name.
        var name: String
        /// The header's value.
        var value: [UInt8]?
    }

    /// The topic to produce to.
    var topic: String
    /// The message key; `nil` for none.
    var key: [UInt8]?
    /// The message value.
    var value: [UInt8]
    /// The message headers, in order.
    var headers: [Header]
    /// When the collector accepted the message, in milliseconds since 1970.
    var appendedAt: Int64
}
