/// One cell of `flowmeter-bench ingest`'s matrix: the conditions both targets are measured under.
public struct IngestCell: Hashable, Sendable, Comparable {
    /// `delivered` (202 after the delivery report) or `enqueue` (202 once the producer took the events).
    public var ack: String
    /// Keep-alive connections of the load generator.
    public var connections: Int
    /// `plain` or `gzip` request bodies.
    public var encoding: String
    /// `distinct` (the 512 synthetic batches, each plain send with a unique id) or `repeated` (one batch without id).
    public var batches: String

    /// The cell as given.
    public init(ack: String, connections: Int, encoding: String, batches: String) {
        self.ack = ack
        self.connections = connections
        self.encoding = encoding
        self.batches = batches
    }

    /// Every combination, in the order given: ack mode outermost, then connections, encoding, batch set.
    public static func matrix(
        acks: [String], connections: [Int], encodings: [String], batches: [String]
    ) -> [IngestCell] {
        acks.flatMap { ack in
            connections.flatMap { count in
                encodings.flatMap { encoding in
                    batches.map { IngestCell(ack: ack, connections: count, encoding: encoding, batches: $0) }
                }
            }
        }
    }

    /// Delivered before enqueue, then fewer connections, plain before gzip, distinct before repeated.
    public static func < (lhs: IngestCell, rhs: IngestCell) -> Bool {
        func rank(_ cell: IngestCell) -> (Int, Int, Int, Int) {
            (
                cell.ack == "delivered" ? 0 : 1, cell.connections, cell.encoding == "plain" ? 0 : 1,
                cell.batches == "distinct" ? 0 : 1
            )
        }
        return rank(lhs) < rank(rhs)
    }

    /// `delivered 32 plain distinct`.
    public var label: String { "\(ack) \(connections) \(encoding) \(batches)" }
}
