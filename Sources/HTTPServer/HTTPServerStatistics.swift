/// A snapshot of the server's gauges and counters, for `/metrics`.
///
/// Counters only grow for the life of the server; gauges go up and down.
public struct HTTPServerStatistics: Sendable, Hashable {
    /// Gauge: connections currently open.
    public var openConnections: Int
    /// Gauge: requests whose headers arrived and that have not ended yet.
    public var inFlightRequests: Int
    /// Gauge: requests waiting, suspended, for their handler's answer.
    public var suspendedRequests: Int
    /// Counter: requests that ended, however they ended.
    public var completedRequests: Int
    /// Counter: requests answered with `timeoutResponse` after `responseDeadline`.
    public var responseDeadlineExpirations: Int
    /// Counter: requests refused for their body size (413 or closed connection).
    public var bodiesTooLarge: Int
    /// Counter: connections closed because a request was not delivered within `requestDeadline`.
    public var receiveDeadlineExpirations: Int
    /// Request-body bytes reserved now (declared lengths of bodies being received or handled).
    public var bodyBytesInFlight: Int = 0
    /// Requests answered with `bodyBudgetResponse` because the body budget was spent.
    public var bodyBudgetRejections: Int = 0
    /// Requests the admission check answered before their body was read.
    public var admissionRejections: Int = 0
}
