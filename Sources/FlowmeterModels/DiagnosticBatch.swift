/// One request body of `POST /v1/diagnostics`: a batch of events from one app install.
///
/// Decoding through `Decodable` is lossy: bad events are dropped silently. Use ``CodableBatchDecoder`` or
/// ``FastBatchDecoder`` to learn what was dropped and why.
public struct DiagnosticBatch: Hashable, Sendable, Codable {
    /// The batch id; a retry carries the same id.
    public var id: String?
    /// When the app sent the batch.
    public var sentAt: Timestamp?
    /// Who sent it.
    public var client: ClientInfo
    /// Page decodes since the app's previous batch, the denominator for rates.
    public var decodes: Int?
    /// The events that decoded.
    public var events: [DiagnosticEvent]
    /// What the app's SDK dropped before sending, when it says; never a reason to reject the batch.
    public var clientReport: ClientReport?

    /// Creates a batch.
    public init(
        id: String? = nil, sentAt: Timestamp? = nil, client: ClientInfo, decodes: Int? = nil,
        events: [DiagnosticEvent], clientReport: ClientReport? = nil
    ) {
        self.id = id
        self.sentAt = sentAt
        self.client = client
        self.decodes = decodes
        self.events = events
        self.clientReport = clientReport
    }
}

extension DiagnosticBatch {
    enum CodingKeys: String, CodingKey {
        case id, sentAt, client, decodes, events, clientReport
    }

    /// Decodes a batch lossily: events that fail are dropped without a trace (see ``DecodedBatch`` for reports).
    public init(from decoder: any Decoder) throws {
        self = try DecodedBatch(from: decoder).batch
    }
}
