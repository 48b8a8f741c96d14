public import FlowmeterModels

/// What the collector answered to one batch (CONTRACT §1).
public struct IngestAnswer: Sendable, Hashable, Decodable {
    /// Events the collector took.
    public var accepted: Int
    /// Events it dropped, each reported in `diagnostics`.
    public var dropped: Int
    /// Why each dropped event was dropped.
    public var diagnostics: [DecodeDiagnostic]

    /// Creates an answer.
    public init(accepted: Int, dropped: Int, diagnostics: [DecodeDiagnostic] = []) {
        self.accepted = accepted
        self.dropped = dropped
        self.diagnostics = diagnostics
    }

    enum CodingKeys: String, CodingKey { case accepted, dropped, diagnostics }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        accepted = try container.decode(Int.self, forKey: .accepted)
        dropped = try container.decode(Int.self, forKey: .dropped)
        diagnostics = try container.decodeIfPresent([DecodeDiagnostic].self, forKey: .diagnostics) ?? []
    }
}
