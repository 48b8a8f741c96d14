import FlowmeterModels
import FlowmeterWire

/// Applies the contract's age and skew rules to a decoded batch and keeps every event's position in the batch.
///
/// Skew correction: when the batch has `sentAt`, the device clock is taken to be off by `receivedAt - sentAt`, and
/// each `occurredAt` is shifted by that before the checks. Published events keep the `occurredAt` the app sent.
struct Normalizer {
    /// The result: accepted events with their positions, events dropped for their time, and the 202 body's
    /// diagnostics in batch order.
    struct Result {
        /// The accepted events in batch order; the decoded batch's own array (shared, not copied) when every event
        /// passed the time checks, which is the common case.
        var accepted: EventTable
        /// `positions[i]` is the index in the batch as sent of `accepted.events[i]` (for the `<batch id>/<index>`
        /// id).
        var positions: [Int] = []
        /// The kind and outcome (``EventOutcome/droppedTooOld`` or ``EventOutcome/droppedFuture``) of each event
        /// dropped for its time.
        var late: [(kind: DiagnosticKind, outcome: EventOutcome)] = []
        var diagnostics: [DecodeDiagnostic] = []
    }

    let maxAge: Duration
    let maxFutureSkew: Duration
    let receivedAt: Timestamp

    func normalize(_ decoded: CompactBatch) -> Result {
        var result = Result(accepted: decoded.table)
        let events = decoded.table.events
        let skew = decoded.header.sentAt.map { nanoseconds(receivedAt) - nanoseconds($0) } ?? 0
        let now = nanoseconds(receivedAt)
        let maxAge = nanoseconds(maxAge), maxFuture = nanoseconds(maxFutureSkew)
        var timeDrops: [(index: Int, diagnostic: DecodeDiagnostic)] = []
        // Walked alongside the events in ascending order.
        let droppedIndices = decoded.droppedIndices
        var nextDropped = 0
        var positions: [Int] = []
        positions.reserveCapacity(events.count)
        // Positions of late events in `events`; the accepted array is only rebuilt when there is one.
        var lateOffsets: [Int] = []
        var index = 0
        for offset in events.indices {
            while nextDropped < droppedIndices.count && droppedIndices[nextDropped] <= index {
                if droppedIndices[nextDropped] == index { index += 1 }
                nextDropped += 1
            }
            let occurred = nanoseconds(events[offset].occurredAt) + skew
            if now - occurred > maxAge {
                result.late.append((decoded.table.kind(of: events[offset]), .droppedTooOld))
                lateOffsets.append(offset)
                timeDrops.append(
                    (index, DecodeDiagnostic(path: Self.path(index), message: "Event is older than the maximum age")))
            } else if occurred - now > maxFuture {
                result.late.append((decoded.table.kind(of: events[offset]), .droppedFuture))
                lateOffsets.append(offset)
                timeDrops.append(
                    (index, DecodeDiagnostic(path: Self.path(index), message: "Event is too far in the future")))
            } else {
                positions.append(index)
            }
            index += 1
        }
        result.accepted.removeEvents(atAscendingOffsets: lateOffsets)
        result.positions = positions
        if timeDrops.isEmpty {
            result.diagnostics = decoded.dropped
        } else {
            let merged = zip(decoded.droppedIndices, decoded.dropped).map { (index: $0, diagnostic: $1) } + timeDrops
            result.diagnostics = merged.sorted { $0.index < $1.index }.map(\.diagnostic)
        }
        return result
    }

    private static func path(_ index: Int) -> String {
        "events.Index \(index)"
    }

    // In 128 bits: nanoseconds since 1970 pass Int64 after the year 2262, and a timestamp may say any year up to
    // 9999. In 64 bits a far-future `sentAt` trapped in the skew (one request crashed the collector), and an
    // `occurredAt` 2^64 ns (584 years) ahead wrapped around to "now" and was accepted.
    private func nanoseconds(_ timestamp: Timestamp) -> Int128 {
        Int128(timestamp.secondsSinceEpoch) * 1_000_000_000 + Int128(timestamp.nanoseconds)
    }

    private func nanoseconds(_ duration: Duration) -> Int128 {
        let (seconds, attoseconds) = duration.components
        return Int128(seconds) * 1_000_000_000 + Int128(attoseconds / 1_000_000_000)
    }
}
