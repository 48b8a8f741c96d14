public import FlowmeterModels
public import FlowmeterWire
import Foundation
import Hashing

/// One record of `flowmeter.batches.v1` as the sink reads it: an accepted batch (or one part of a split one),
/// normalized by the collector (docs/api.md#kafka-topics).
@dynamicMemberLookup
public struct BatchRecord: Sendable, Decodable {
    /// The batch's own fields (``BatchRecordWriter/Batch``), written once for every part.
    public var fields: BatchRecordWriter.Batch
    /// This record's part of the batch, from 0.
    public var part: Int
    /// How many parts the batch was split into.
    public var parts: Int
    /// The accepted events, `occurredAt` corrected for skew.
    public var events: [DiagnosticEvent]

    enum CodingKeys: String, CodingKey {
        case batchID, installHash, decodes, clientReport, receivedAt, skewMillis, collector, dropped, part, parts
        case events
    }

    /// Decodes a record; the batch's app fields are read from the same object as ``ClientInfo``'s.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let client = try ClientInfo(from: decoder)
        fields = BatchRecordWriter.Batch(
            batchID: try container.decode(String.self, forKey: .batchID), client: client,
            installHash: try container.decodeIfPresent(String.self, forKey: .installHash),
            decodes: try container.decodeIfPresent(Int.self, forKey: .decodes),
            clientReport: try container.decodeIfPresent(ClientReport.self, forKey: .clientReport),
            receivedAt: try container.decode(Timestamp.self, forKey: .receivedAt),
            skewMillis: try container.decodeIfPresent(Int64.self, forKey: .skewMillis) ?? 0,
            collector: try container.decodeIfPresent(String.self, forKey: .collector) ?? "",
            dropped: try container.decodeIfPresent(Int.self, forKey: .dropped) ?? 0)
        part = try container.decodeIfPresent(Int.self, forKey: .part) ?? 0
        parts = try container.decodeIfPresent(Int.self, forKey: .parts) ?? 1
        events = try container.decode([DiagnosticEvent].self, forKey: .events)
        guard part >= 0 && part < parts else {
            throw DecodingError.dataCorruptedError(
                forKey: .part, in: container, debugDescription: "part \(part) of \(parts)")
        }
    }

    /// Decodes the JSON value of a record; throws ``SinkError`` (`badRecord`) when it is not one.
    ///
    /// The reference (Foundation's `JSONDecoder`): the sink's step decodes with ``BatchRecordDecoder``, which the
    /// differential tests and the `batch-record` fuzz target hold to this.
    ///
    /// As ``CodableBatchDecoder`` does, `JSONSerialization` validates the bytes first: `JSONDecoder` alone does not
    /// validate strings it never reads, and accepted invalid UTF-8 under a key a duplicate shadows (found by the
    /// `batch-record` fuzz target).
    public init(jsonBytes: [UInt8]) throws(SinkError) {
        let data = Data(jsonBytes)
        // A NUL byte is never valid in UTF-8 JSON; rejecting it also stops Foundation from guessing UTF-16 or UTF-32.
        if data.contains(0) || (try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])) == nil {
            throw SinkError(.badRecord, "not a batch record: not valid JSON")
        }
        do {
            self = try JSONDecoder().decode(BatchRecord.self, from: data)
        } catch {
            throw SinkError(.badRecord, "not a batch record: \(error)")
        }
    }

    /// The batch's fields read as the record's own (`record.batchID`, `record.client.appID`).
    public subscript<Value>(dynamicMember keyPath: WritableKeyPath<BatchRecordWriter.Batch, Value>) -> Value {
        get { fields[keyPath: keyPath] }
        set { fields[keyPath: keyPath] = newValue }
    }

    /// The dedupe key of this record: every copy of the same part of the same batch has it, whichever collector
    /// wrote it.
    public var key: String {
        BatchRecord.key(appID: fields.client.appID, batchID: fields.batchID, part: part)
    }

    /// 32 hex digits of SHA-256 over the app id, the batch id and the part: fixed-size whatever the ids' lengths,
    /// and stable across processes (it is stored).
    public static func key(appID: String, batchID: String, part: Int) -> String {
        var bytes = Array(appID.utf8)
        bytes.append(0)
        bytes += batchID.utf8
        bytes.append(0)
        bytes += String(part).utf8
        return Hex.encode(SHA256.digest(bytes).prefix(16))
    }
}
