public import FlowmeterModels
public import Foundation

/// The ingest path's batch decoder: one pass over the bytes, no Foundation JSON, same results as
/// ``CodableBatchDecoder``.
///
/// Same accepted events, same drop reports (path and message), same batch-level accept or reject and error code.
/// Where the two differ only in wording: for invalid JSON this decoder's message names the problem and byte offset,
/// where Foundation only says the data is not valid JSON. Safe on hostile input: no recursion, nesting capped at 512,
/// linear time.
public enum FastBatchDecoder {
    /// Decodes a batch from UTF-8 bytes, dropping and reporting bad events; throws ``BatchDecodingError`` when the
    /// batch as a whole cannot be taken.
    ///
    /// With `maxEvents`, an `events` array with more elements throws `tooManyEvents` as soon as the element past the
    /// limit begins, so an oversized batch costs no more than the limit's worth of decoding (and no report for each
    /// of a million broken elements); whatever follows is not looked at.
    public static func decode(_ bytes: [UInt8], maxEvents: Int = .max) throws(BatchDecodingError) -> DecodedBatch {
        var interner = StringInterner()
        return try decode(bytes, maxEvents: maxEvents, interner: &interner)
    }

    /// Decodes as ``decode(_:maxEvents:)`` does, sharing repeated strings through `interner`, which keeps them for
    /// the next decode that is lent it (the collector's ``StringInterner`` pool): the results are the same.
    public static func decode(
        _ bytes: [UInt8], maxEvents: Int = .max, interner: inout StringInterner
    ) throws(BatchDecodingError) -> DecodedBatch {
        try decodeCompact(bytes, maxEvents: maxEvents, interner: &interner).decoded
    }

    /// Decodes as ``decode(_:maxEvents:)`` does, into a ``CompactBatch`` (whose ``CompactBatch/decoded`` is that
    /// result): the collector's ingest path.
    ///
    /// The events and their strings are decoded into `storage`'s arrays, emptied first, so a caller that keeps the
    /// arrays of finished batches (the collector's `EventStoragePool`) allocates neither per batch; the results are
    /// the same.
    public static func decodeCompact(
        _ bytes: [UInt8], maxEvents: Int = .max, interner: inout StringInterner,
        storage: consuming EventTableStorage = EventTableStorage()
    ) throws(BatchDecodingError) -> CompactBatch {
        // Moved, not copied, all the way into the parser: a second reference would make emptying it allocate anew.
        var storage = consume storage
        let result = bytes.withUnsafeBufferPointer { buffer in
            decode(buffer, maxEvents: maxEvents, interner: &interner, storage: &storage)
        }
        return try result.get()
    }

    /// Decodes a batch from UTF-8 bytes in `data`; see ``decode(_:)-(Array<UInt8>)``.
    public static func decode(_ data: Data) throws(BatchDecodingError) -> DecodedBatch {
        var interner = StringInterner()
        var storage = EventTableStorage()
        let result = data.withUnsafeBytes { raw in
            decode(raw.bindMemory(to: UInt8.self), interner: &interner, storage: &storage)
        }
        return try result.get().decoded
    }

    static func decode(
        _ buffer: UnsafeBufferPointer<UInt8>, maxEvents: Int = .max, interner: inout StringInterner,
        storage: inout EventTableStorage
    ) -> Result<CompactBatch, BatchDecodingError> {
        guard let base = buffer.baseAddress, buffer.count > 0 else {
            return .failure(BatchDecodingError(.invalidJSON, "Empty body at offset 0", path: ""))
        }
        // The parser owns the interner while it runs (so its tables are mutated in place) and hands it back.
        var parser = FastBatchParser(
            reader: ByteReader(base: base, count: buffer.count), maxEvents: maxEvents, interner: interner)
        interner = StringInterner.lent
        defer { interner = parser.interner }
        do {
            return try parser.parse(storage: &storage)
        } catch  where parser.exceededMaxEvents {
            return .failure(
                BatchDecodingError(.tooManyEvents, "More than \(maxEvents) events in the batch", path: "events"))
        } catch {
            return .failure(
                BatchDecodingError(.invalidJSON, "\(error.reason) at offset \(error.offset)", path: ""))
        }
    }
}
