import FlowmeterModels
import Foundation

extension CollectorWatermark {
    /// The message value: `{"type": "watermark", "collector", "partition", "partitions", "completeUpTo",
    /// "state": "running"|"stopped"}`, times as RFC 3339.
    public func jsonBytes() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Plain strings and integers: encoding cannot fail.
        return [UInt8](try! encoder.encode(WatermarkWire(self)))
    }

    /// The Kafka key: `watermark|<collector>` (the partition is chosen explicitly, not by the key).
    public var kafkaKey: [UInt8] { Array("watermark|\(collector)".utf8) }

    /// Decodes a message value; anything that is not a valid watermark throws ``RollupsError``
    /// (`invalidPartialRollup`, the code every bad rollups-topic message carries).
    public init(jsonBytes bytes: some Collection<UInt8>) throws(RollupsError) {
        do {
            self = try JSONDecoder().decode(WatermarkWire.self, from: Data(bytes)).watermark
        } catch let error as DecodingError {
            throw RollupsError(.invalidPartialRollup, "Invalid watermark: \(error.summary)")
        } catch {
            throw RollupsError(.invalidPartialRollup, "Invalid watermark: \(error)")
        }
    }
}

/// The JSON shape of a watermark message.
struct WatermarkWire: Codable {
    enum CodingKeys: String, CodingKey {
        case type, collector, partition, partitions, completeUpTo, state
    }

    var watermark: CollectorWatermark

    init(_ watermark: CollectorWatermark) {
        self.watermark = watermark
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        guard try container.decode(String.self, forKey: .type) == "watermark" else {
            throw DecodingError.dataCorruptedError(
                forKey: .type, in: container, debugDescription: "type is not 'watermark'")
        }
        let collector = try container.decode(String.self, forKey: .collector)
        guard IdentifierRule.isValid(collector) else {
            throw DecodingError.dataCorruptedError(
                forKey: .collector, in: container, debugDescription: "a string breaks the identifier rule")
        }
        let partitions = try container.decode(Int.self, forKey: .partitions)
        let partition = try container.decode(Int.self, forKey: .partition)
        guard (1...CollectorWatermark.maxPartitions).contains(partitions), (0..<partitions).contains(partition) else {
            throw DecodingError.dataCorruptedError(
                forKey: .partition, in: container, debugDescription: "partition \(partition) of \(partitions)")
        }
        let state = try container.decode(String.self, forKey: .state)
        guard state == "running" || state == "stopped" else {
            throw DecodingError.dataCorruptedError(
                forKey: .state, in: container, debugDescription: "state is neither 'running' nor 'stopped'")
        }
        watermark = CollectorWatermark(
            collector: collector, partition: partition, partitions: partitions,
            completeUpTo: try container.decode(Timestamp.self, forKey: .completeUpTo), isStopped: state == "stopped")
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode("watermark", forKey: .type)
        try container.encode(watermark.collector, forKey: .collector)
        try container.encode(watermark.partition, forKey: .partition)
        try container.encode(watermark.partitions, forKey: .partitions)
        try container.encode(watermark.completeUpTo, forKey: .completeUpTo)
        try container.encode(watermark.isStopped ? "stopped" : "running", forKey: .state)
    }
}
