/// What one ingest request costs its key, in token-bucket units (events): the most of its events, its body's size
/// in KiB (after inflating) and 1.
///
/// A batch of honest events is charged its event count (an event takes a few hundred bytes), as docs/api.md#keys-file's
/// `eventsPerSecond` says; a body that is mostly something else (padding, unknown keys, a failure after a long
/// decode) is charged by the bytes the collector read, so no answer is cheaper for the key than the work behind it.
struct RequestCost {
    /// The bytes the collector read or inflated.
    var bodyBytes: Int
    /// The events the decoder went through.
    var events = 0
    /// Whether the tokens were taken already (an accepted batch).
    var isPaid = false

    init(bodyBytes: Int) {
        self.bodyBytes = bodyBytes
    }

    /// The tokens to charge.
    var units: Int {
        max(1, events, (bodyBytes + 1023) / 1024)
    }
}
