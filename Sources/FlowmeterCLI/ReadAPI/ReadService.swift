import Collector
import HTTPServer
import Synchronization

/// Runs read queries for the read API and the console off the HTTP worker threads and off the cooperative pool
/// (on a ``QueryExecutor``), a bounded number at once.
///
/// A handler hands its query here and returns; the answer goes out from the task when the query is done (the
/// server holds no thread meanwhile, and answers 503 itself if `responseDeadline` passes first). Past
/// `maxInFlight` queries a request is answered 503 with `Retry-After` at once, so a burst of console reloads
/// cannot queue unbounded work on the store.
final class ReadService: Sendable {
    /// The queries.
    let queries: ReadQueries
    /// The keys, for `readAccess(token:)`.
    let keys: IngestKeys
    private let maxInFlight: Int
    private let executor = QueryExecutor()
    private let inFlight = Atomic<Int>(0)

    /// A service for `queries` with at most `maxInFlight` running at once.
    init(queries: ReadQueries, keys: IngestKeys, maxInFlight: Int = 4) {
        self.queries = queries
        self.keys = keys
        self.maxInFlight = maxInFlight
    }

    /// Runs `work` in a task and answers `responder` with its response, or answers 503 now when the service is
    /// full.
    func respond(
        _ responder: HTTPResponder, busy: HTTPResponse = ReadService.busy,
        _ work: @escaping @Sendable () async -> HTTPResponse
    ) {
        let (previous, _) = inFlight.add(1, ordering: .acquiringAndReleasing)
        guard previous < maxInFlight else {
            _ = inFlight.subtract(1, ordering: .acquiringAndReleasing)
            responder.respond(busy)
            return
        }
        Task(executorPreference: executor) { [self] in
            let response = await work()
            _ = inFlight.subtract(1, ordering: .acquiringAndReleasing)
            responder.respond(response)
        }
    }

    /// The answer when too many queries are running: 503 `unavailable` with `Retry-After: 1`.
    static let busy = HTTPResponse.error(
        status: .serviceUnavailable, code: "unavailable", message: "Too many queries at once; retry shortly.",
        headers: ["Retry-After": "1"])
}
