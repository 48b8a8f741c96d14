import FlowmeterModels
import FlowmeterWire
import Foundation
import Synchronization

/// The collector's batch decoder against the reference: ``FastBatchDecoder`` and ``CodableBatchDecoder`` on the
/// same bytes.
///
/// Invariants:
/// - Neither decoder crashes.
/// - Both accept or both reject; when both reject, with the same error code, and for every code but `invalidJSON`
///   the same path and message (the wording of a syntax error differs by design).
/// - When both accept, the same accepted batch and the same drop reports, compared byte for byte (their
///   `JSONEncoder` spellings), not only by `==`, which treats canonically equivalent strings as equal.
/// - Every accepted event, written as its Kafka record by ``EventRecordWriter``, decodes with `JSONDecoder` to the
///   record ``EventRecord/init(event:index:batchID:client:installHash:receivedAt:collector:)`` makes, byte for
///   byte: what the collector publishes is what it decoded.
/// - Every event of the kept decode's ``CompactBatch``, written as the collector writes it (``CompactRecordWriter``,
///   each table entry escaped once), has the key and record bytes the per-event writers give the same event.
///
/// - The decode with an interner kept from earlier inputs (as the collector lends them, here with few slots so
///   inputs evict each other), into the events array of the input before (as the collector's kept arrays are),
///   gives the same result, byte for byte, as a decode with a fresh one.
///
/// One known Foundation difference is allowed (the same as in `DifferentialTests`): a number out of range in a
/// member that a later duplicate key overwrites; `JSONSerialization` forgets it, the fast path rejects it anyway.
package enum BatchDecoderFuzzTarget: FuzzTarget {
    package static let name = "batch-decoder"

    package static func check(_ input: [UInt8]) throws(FuzzFailure) {
        let fast = Result { () throws(BatchDecodingError) in try FastBatchDecoder.decode(input) }
        let keptCompact = Self.kept.withLock { kept in
            let result = Result { () throws(BatchDecodingError) in
                try FastBatchDecoder.decodeCompact(input, interner: &kept.interner, storage: kept.storage)
            }
            kept.storage = (try? result.get())?.table.storage ?? EventTableStorage()
            return result
        }
        let kept = keptCompact.map(\.decoded)
        switch (fast, kept) {
        case (.success(let left), .success(let right)):
            try require(
                exactlyEqual(left.batch, right.batch) && exactlyEqual(left.dropped, right.dropped),
                "a kept interner changed the batch: \(right.batch) vs \(left.batch)")
        case (.failure(let left), .failure(let right)):
            try require(left == right, "a kept interner changed the error: \(right) vs \(left)")
        default:
            throw FuzzFailure("a kept interner changed the outcome: \(kept) vs \(fast)")
        }
        let reference = Result { () throws(BatchDecodingError) in try CodableBatchDecoder.decode(Data(input)) }
        if case .failure(let error) = fast, error.code == .invalidJSON,
            error.message.hasPrefix("Number is not representable")
        {
            // The allowed difference: Foundation misses (or reads as another type) an out-of-range number whose
            // member a duplicate key shadows; the fast path rejects it wherever it is (docs/reliability.md H4).
            return
        }
        switch (fast, reference) {
        case (.success(let left), .success(let right)):
            try require(
                exactlyEqual(left.dropped, right.dropped),
                "drop reports differ: fast \(left.dropped) vs codable \(right.dropped)")
            try require(
                exactlyEqual(left.batch, right.batch), "batches differ: fast \(left.batch) vs codable \(right.batch)")
            try checkRecords(of: left.batch)
            if case .success(let compact) = keptCompact { try checkCompactRecords(of: compact) }
        case (.failure(let left), .failure(let right)):
            try require(left.code == right.code, "error codes differ: fast \(left) vs codable \(right)")
            try require(
                left.code == .invalidJSON || left == right, "errors differ: fast \(left) vs codable \(right)")
        case (.failure(let left), .success(let right)):
            throw FuzzFailure("codable accepted (\(right.batch.events.count) events) but fast failed: \(left)")
        case (.success(let left), .failure(let right)):
            throw FuzzFailure("fast accepted (\(left.batch.events.count) events) but codable failed: \(right)")
        }
    }

    /// What the collector keeps between decodes, shared by every input of a run: an interner (so one input's strings
    /// are in the cache when the next is decoded) and the last batch's events array to decode into.
    private struct Kept {
        var interner = StringInterner(slots: 16)
        var storage = EventTableStorage()
        /// The record writers' escaped table, reused as the collector's are.
        let scratch = EscapedTable()
    }

    private static let kept = Mutex(Kept())

    /// Writes every event as the collector does and reads it back.
    private static func checkRecords(of batch: DiagnosticBatch) throws(FuzzFailure) {
        let receivedAt = Timestamp(secondsSinceEpoch: 1_764_493_200, nanoseconds: 123_000)
        let batchID = batch.id ?? "fuzz-batch"
        var buffer: [UInt8] = []
        for (index, event) in batch.events.enumerated() {
            let expected = EventRecord(
                event: event, index: index, batchID: batchID, client: batch.client, installHash: "h",
                receivedAt: receivedAt, collector: "fuzz")
            buffer.removeAll(keepingCapacity: true)
            EventRecordWriter.append(
                event: event, index: index, batchID: batchID, client: batch.client, installHash: "h",
                receivedAt: receivedAt, collector: "fuzz", to: &buffer)
            let decoded: EventRecord
            do {
                decoded = try JSONDecoder().decode(EventRecord.self, from: Data(buffer))
            } catch {
                throw FuzzFailure("the Kafka record of event \(index) does not decode: \(error); \(show(buffer))")
            }
            try require(
                exactlyEqual(decoded, expected),
                "the Kafka record of event \(index) reads back as \(decoded), not \(expected)")
        }
    }
}

extension BatchDecoderFuzzTarget {
    /// Writes every event's key and record through the batch's ``CompactRecordWriter``, as the collector does, and
    /// holds them to the per-event writers' bytes for the same event.
    private static func checkCompactRecords(of batch: CompactBatch) throws(FuzzFailure) {
        let receivedAt = Timestamp(secondsSinceEpoch: 1_764_493_200, nanoseconds: 123_000)
        let batchID = batch.header.id ?? "fuzz-batch"
        let client = batch.header.client
        let writer = CompactRecordWriter(
            table: batch.table,
            shared: EventRecordBatch(
                batchID: batchID, client: client, installHash: "h", receivedAt: receivedAt, collector: "fuzz"),
            keyPrefix: SeriesKey.AppPrefix(appID: client.appID), scratch: kept.withLock { $0.scratch })
        var expected: [UInt8] = []
        for (index, compact) in batch.table.events.enumerated() {
            let event = batch.table.diagnosticEvent(compact)
            expected.removeAll(keepingCapacity: true)
            EventRecordWriter.append(
                event: event, index: index, batchID: batchID, client: client, installHash: "h",
                receivedAt: receivedAt, collector: "fuzz", to: &expected)
            let record = [UInt8](unsafeUninitializedCapacity: writer.maxLength(of: compact)) { memory, count in
                count = writer.write(event: compact, index: index, into: UnsafeMutableRawBufferPointer(memory))
            }
            try require(
                record == expected, "the compact record of event \(index) is \(show(record)), not \(show(expected))")
            let key = [UInt8](unsafeUninitializedCapacity: writer.keyLength(of: compact)) { memory, count in
                count = writer.writeKey(of: compact, into: UnsafeMutableRawBufferPointer(memory))
            }
            let expectedKey = SeriesKey.bytes(appID: client.appID, kind: event.kind, widgetType: event.widgetType)
            try require(
                key == expectedKey, "the compact key of event \(index) is \(show(key)), not \(show(expectedKey))")
        }
    }
}

/// Whether `left` and `right` encode to the same bytes with sorted keys: equality that tells apart strings `==`
/// calls equal (canonically equivalent, different scalars). Only for values without sets or dictionaries whose
/// iteration order could differ.
func exactlyEqual<Value: Encodable>(_ left: Value, _ right: Value) -> Bool {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    // Encoding these plain values cannot fail; a failure on either side counts as a difference.
    guard let leftBytes = try? encoder.encode(left), let rightBytes = try? encoder.encode(right) else { return false }
    return leftBytes == rightBytes
}
