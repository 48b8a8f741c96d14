import FlowmeterModels

/// The half-open time range `from..<to` a query reads.
struct QueryWindow: Hashable, Sendable {
    /// The first instant included.
    var from: Timestamp
    /// The first instant excluded.
    var to: Timestamp

    /// The window's length in seconds.
    var seconds: Int64 { to.secondsSinceEpoch - from.secondsSinceEpoch }

    /// The window of the same length that ends where this one starts, for trends.
    var previous: QueryWindow {
        QueryWindow(from: Timestamp(secondsSinceEpoch: from.secondsSinceEpoch - seconds), to: from)
    }
}
