/// The result of decoding a batch: what was accepted and a report for every event that was dropped.
public struct DecodedBatch: Hashable, Sendable {
    /// The batch with the accepted events, in their original order.
    public var batch: DiagnosticBatch
    /// One report per dropped event, in their original order.
    public var dropped: [DecodeDiagnostic]
    /// Where each dropped event sat in `events` as sent: `droppedIndices[i]` is the position of `dropped[i]`, as a
    /// number (the report's `path` spells it for people).
    public var droppedIndices: [Int]

    /// Creates a result; `droppedIndices` must have one position per report.
    public init(batch: DiagnosticBatch, dropped: [DecodeDiagnostic], droppedIndices: [Int]) {
        precondition(dropped.count == droppedIndices.count, "one position per dropped event")
        self.batch = batch
        self.dropped = dropped
        self.droppedIndices = droppedIndices
    }
}

extension DecodedBatch: Decodable {
    /// Decodes a batch, dropping and reporting each event that fails; a batch-level problem throws a
    /// `DecodingError` whose description is the contract's message.
    ///
    /// Batch keys are checked in a fixed order (id, sentAt, client, decodes, events).
    public init(from decoder: any Decoder) throws {
        guard let container = try? decoder.container(keyedBy: DiagnosticBatch.CodingKeys.self) else {
            throw DecodingError.typeMismatch(
                Any.self,
                .init(
                    codingPath: decoder.codingPath,
                    debugDescription: DecodeMessages.typeMismatch(
                        expected: "Object", key: nil, found: foundType(of: decoder))
                )
            )
        }
        let id = try container.identifier(.id)
        let sentAt = try container.timestamp(.sentAt, required: false)
        _ = try container.object(.client, keyedBy: ClientInfo.CodingKeys.self, required: true)
        let client = try container.decode(ClientInfo.self, forKey: .client)
        let decodes = try container.int(.decodes)
        var list = try container.array(.events, required: true)!
        var events: [DiagnosticEvent] = []
        var dropped: [DecodeDiagnostic] = []
        var droppedIndices: [Int] = []
        while !list.isAtEnd {
            let index = list.currentIndex
            let element = try list.superDecoder()
            do {
                events.append(try DiagnosticEvent(from: element))
            } catch let error as DecodingError {
                // A field's own problem (an identifier that breaks the rule) names the field after the element.
                let element = pathString(list.codingPath + [AnyCodingKey(intValue: index)])
                let named = error.contractPath
                let path = named.hasPrefix(element + ".") ? named : element
                dropped.append(DecodeDiagnostic(path: path, message: error.contractMessage))
                droppedIndices.append(index)
            }
        }
        let clientReport = ClientReport.lenient(in: container, forKey: .clientReport)
        self.init(
            batch: DiagnosticBatch(
                id: id, sentAt: sentAt, client: client, decodes: decodes, events: events, clientReport: clientReport),
            dropped: dropped, droppedIndices: droppedIndices
        )
    }
}

extension DecodingError {
    /// The contract message carried in the error's description.
    var contractMessage: String {
        switch self {
        case .keyNotFound(_, let context), .typeMismatch(_, let context), .valueNotFound(_, let context),
            .dataCorrupted(let context):
            return context.debugDescription
        @unknown default:
            return String(describing: self)
        }
    }

    /// The problem and where, in one line: what a rejected message's error says (a deploy marker's, for one).
    package var summary: String {
        let at = contractPath
        let problem: String
        if case .keyNotFound(let key, _) = self {
            problem = "missing key '\(key.stringValue)'"
        } else {
            problem = contractMessage
        }
        return problem + (at.isEmpty ? "" : " at \(at)")
    }

    /// The container path the error names.
    var contractPath: String {
        switch self {
        case .keyNotFound(_, let context), .typeMismatch(_, let context), .valueNotFound(_, let context),
            .dataCorrupted(let context):
            return pathString(context.codingPath)
        @unknown default:
            return ""
        }
    }
}
