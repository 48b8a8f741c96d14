/// Where one record's fields lie in a buffer read from a segment: offsets, no copies.
///
/// Made by ``SpoolFormat/frame(in:at:)``; every range indexes the buffer that was decoded.
struct SpoolRecordView: Sendable, Hashable {
    /// Where the frame (length, checksum, payload) starts.
    var start: Int
    /// Where the next frame starts.
    var end: Int
    /// When the record was accepted, in milliseconds since 1970.
    var appendedAt: Int64
    /// The topic and header block (topic length, topic, header count, headers): the same bytes for every record of
    /// one batch, so a reader can decode them once and reuse the result.
    var metadata: Range<Int>
    /// The key bytes, or `nil` for a record without a key.
    var key: Range<Int>?
    /// The value bytes.
    var value: Range<Int>
}
