import FlowmeterModels
import Foundation
import Rollups
import Sink
import Synchronization

/// The sink's batch-record decoder against the reference: ``BatchRecordDecoder`` and ``BatchRecord/init(jsonBytes:)``
/// (Foundation's `JSONDecoder`) on the same bytes, as a record of `flowmeter.batches.v1`, which anyone with Kafka
/// access can write.
///
/// Invariants:
/// - Neither decoder crashes.
/// - Both accept or both reject (the rejection's wording may differ; either way the sink dead-letters the record).
/// - When both accept, every field and every event is the same, compared byte for byte (their `JSONEncoder`
///   spellings), not only by `==`, which treats canonically equivalent strings as equal.
/// - A decoder kept across inputs (as the sink keeps one, its interner holding earlier inputs' strings; here with
///   few slots so inputs evict each other) gives the same result as a fresh one.
/// - An accepted record can be aggregated (``RollupAggregator``, as the sink's step does) and drained.
///
/// One known Foundation difference is allowed, as for the batch decoder: a number out of range in a member that a
/// later duplicate key overwrites; `JSONSerialization` forgets it, the fast path rejects it anyway.
package enum BatchRecordFuzzTarget: FuzzTarget {
    package static let name = "batch-record"

    static let kept = Mutex(BatchRecordDecoder(internerSlots: 4))

    package static func check(_ input: [UInt8]) throws(FuzzFailure) {
        var fresh = BatchRecordDecoder()
        let fast = Result { () throws(SinkError) in try fresh.decode(input) }
        let kept = Self.kept.withLock { decoder in Result { () throws(SinkError) in try decoder.decode(input) } }
        switch (fast, kept) {
        case (.success(let left), .success(let right)):
            try require(
                spelling(left) == spelling(right), "a kept decoder changed the record: \(right) vs \(left)")
        case (.failure, .failure): break
        default: throw FuzzFailure("a kept decoder changed the outcome: \(kept) vs \(fast)")
        }
        let reference = Result { () throws(SinkError) in try BatchRecord(jsonBytes: input) }
        if case .failure(let error) = fast, error.message.contains("Number is not representable") { return }
        switch (fast, reference) {
        case (.success(let left), .success(let right)):
            let (fastBytes, referenceBytes) = (spelling(left), spelling(right))
            try require(
                fastBytes == referenceBytes,
                "the decoders read different records: \(show(fastBytes)) vs reference \(show(referenceBytes))")
            try require(left.key == right.key, "different dedupe keys")
            let aggregator = RollupAggregator(
                configuration: .init(collectorID: "fuzz", bootID: "0", shardCount: 1, maxEntries: 1_000))
            let isFirst = left.part == 0
            aggregator.record(
                left.table, client: left.client, decodes: isFirst ? left.decodes : 0, installHash: left.installHash,
                receivedAt: left.receivedAt, droppedEvents: left.dropped,
                clientDiscarded: isFirst ? left.clientReport?.totalEvents ?? 0 : 0, isContinuation: !isFirst)
            _ = aggregator.drain()
        case (.failure, .failure): break
        case (.success(let left), .failure(let error)):
            throw FuzzFailure("only the fast decoder accepts (\(left)); the reference says \(error.message)")
        case (.failure(let error), .success(let right)):
            throw FuzzFailure("only the reference accepts (\(right)); the fast decoder says \(error.message)")
        }
    }

    /// Every field of a decoded record, for comparing byte for byte.
    struct Spelling: Encodable {
        var batchID: String
        var client: ClientInfo
        var installHash: String?
        var decodes: Int?
        var clientReport: ClientReport?
        var receivedAt: Timestamp
        var skewMillis: Int64
        var collector: String
        var dropped: Int
        var part: Int
        var parts: Int
        var events: [DiagnosticEvent]
    }

    /// The `JSONEncoder` bytes of `record`'s fields (keys sorted).
    static func spelling(_ record: CompactBatchRecord) -> [UInt8] {
        encode(
            Spelling(
                batchID: record.batchID, client: record.client, installHash: record.installHash,
                decodes: record.decodes, clientReport: record.clientReport, receivedAt: record.receivedAt,
                skewMillis: record.skewMillis, collector: record.collector, dropped: record.dropped, part: record.part,
                parts: record.parts, events: record.events))
    }

    /// The `JSONEncoder` bytes of the reference's `record` (keys sorted).
    static func spelling(_ record: BatchRecord) -> [UInt8] {
        encode(
            Spelling(
                batchID: record.batchID, client: record.client, installHash: record.installHash,
                decodes: record.decodes, clientReport: record.clientReport, receivedAt: record.receivedAt,
                skewMillis: record.skewMillis, collector: record.collector, dropped: record.dropped, part: record.part,
                parts: record.parts, events: record.events))
    }

    private static func encode(_ spelling: Spelling) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(spelling)).map { [UInt8]($0) } ?? []
    }
}
