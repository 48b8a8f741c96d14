import FlowmeterModels

/// Applies the contract's age and skew rules to a decoded batch and keeps every event's position in the batch.
///
/// Skew correction: when the batch has `sentAt`, the device clock is taken to be off by `receivedAt - sentAt`, and
/// each `occurredAt` is shifted by that before the checks. Published events keep the `occurredAt` the app sent.
struct Normalizer {
    /// An accepted event and its index in the batch as sent (for the `<batch id>/<index>` fallback id).
    struct Item {
        var event: DiagnosticEvent
        var index: Int
    }

    /// The result: accepted events, events dropped for their time, and the 202 body's diagnostics in batch order.
    struct Result {
        var accepted: [Item] = []
        var late: [(event: DiagnosticEvent, outcome: String)] = []
        var diagnostics: [DecodeDiagnostic] = []
    }

    let maxAge: Duration
    let maxFutureSkew: Duration
    let receivedAt: Timestamp

    func normalize(_ decoded: DecodedBatch) -> Result {
        var result = Result()
        let skew = decoded.batch.sentAt.map { nanoseconds(receivedAt) - nanoseconds($0) } ?? 0
        let now = nanoseconds(receivedAt)
        let maxAge = nanoseconds(maxAge), maxFuture = nanoseconds(maxFutureSkew)
        var timeDrops: [(index: Int, diagnostic: DecodeDiagnostic)] = []
        let droppedIndices = Set(decoded.dropped.compactMap { Self.eventIndex(in: $0.path) })
        var index = 0
        for event in decoded.batch.events {
            while droppedIndices.contains(index) { index += 1 }
            let occurred = nanoseconds(event.occurredAt) &+ skew
            let path = "events.Index \(index)"
            if now &- occurred > maxAge {
                result.late.append((event, "dropped_too_old"))
                timeDrops.append(
                    (index, DecodeDiagnostic(path: path, message: "Event is older than the maximum age")))
            } else if occurred &- now > maxFuture {
                result.late.append((event, "dropped_future"))
                timeDrops.append((index, DecodeDiagnostic(path: path, message: "Event is too far in the future")))
            } else {
                result.accepted.append(Item(event: event, index: index))
            }
            index += 1
        }
        if timeDrops.isEmpty {
            result.diagnostics = decoded.dropped
        } else {
            let merged = decoded.dropped.map { (index: Self.eventIndex(in: $0.path) ?? -1, diagnostic: $0) } + timeDrops
            result.diagnostics = merged.sorted { $0.index < $1.index }.map(\.diagnostic)
        }
        return result
    }

    /// N from a drop report path `events.Index N` (or `events.Index N.something`).
    static func eventIndex(in path: String) -> Int? {
        let prefix = "events.Index "
        guard path.hasPrefix(prefix) else { return nil }
        let digits = path.dropFirst(prefix.count).prefix { $0.isASCII && $0.isNumber }
        return Int(digits)
    }

    private func nanoseconds(_ timestamp: Timestamp) -> Int64 {
        timestamp.secondsSinceEpoch &* 1_000_000_000 &+ Int64(timestamp.nanoseconds)
    }

    private func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds &* 1_000_000_000 &+ attoseconds / 1_000_000_000
    }
}
