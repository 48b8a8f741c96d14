import Glibc

/// Everything an `HTTPServer` needs to listen and the limits it enforces, with defaults fit for the collector.
///
/// Every libmicrohttpd limit is set from here explicitly; none is left to the library's default.
public struct HTTPServerConfiguration: Sendable {
    /// The IPv4 or IPv6 literal to bind; default `127.0.0.1` (loopback only). Use `0.0.0.0` to serve the network.
    public var host: String = "127.0.0.1"
    /// The TCP port; 0 (the default) picks a free ephemeral port, readable from `HTTPServer.port` after `start()`.
    public var port: UInt16 = 0
    /// The number of libmicrohttpd worker threads, each polling its own connections; default the active processors.
    public var threadPoolSize: Int = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    /// The most connections open at once, across all workers; libmicrohttpd accepts and closes the excess.
    public var connectionLimit: Int = 1024
    /// The most connections open at once from one IP address; default 256. Behind a load balancer every client
    /// shares its address, so raise this there.
    public var perIPConnectionLimit: Int = 256
    /// How long a connection may stay silent before libmicrohttpd closes it; whole seconds, rounded up; default 10 s.
    public var inactivityTimeout: Duration = .seconds(10)
    /// The wall-clock time a client has to deliver one whole request (headers and body); default 10 s.
    ///
    /// The clock starts when the connection opens, and on a kept-alive connection when the previous response is
    /// sent, so it also bounds how long an idle kept-alive connection waits for its next request.
    public var requestDeadline: Duration = .seconds(10)
    /// The largest request body accepted, decoded; default 1 MiB. A larger `Content-Length` gets 413 before the
    /// body is read; a chunked body that grows past it has its connection closed without a response.
    public var maxBodyBytes: Int = 1 << 20
    /// Decides from the request line and headers, before any body byte is read, whether a request is read at all;
    /// nil (the default) admits every request. A rejection is answered at once and the connection closed.
    public var admission: HTTPAdmissionCheck?
    /// The most request-body bytes held at once across all requests; default 64 MiB. A request reserves its
    /// `Content-Length` (a chunked one `maxBodyBytes`) before its body is read; past the budget it gets
    /// `bodyBudgetResponse` from its headers alone.
    public var maxBodyBytesInFlight: Int = 64 << 20
    /// The most request-body bytes held at once for one client named by the admission check; default 32 MiB.
    /// Requests admitted without a client name are bounded by `maxBodyBytesInFlight` alone.
    public var maxBodyBytesInFlightPerClient: Int = 32 << 20
    /// The answer when the body budget is spent; default 503 `unavailable` with `Retry-After: 1`.
    public var bodyBudgetResponse: HTTPResponse = .error(
        status: .serviceUnavailable, code: "unavailable", message: "The server is busy; retry later.",
        headers: ["Retry-After": "1"])
    /// How long a handler may take to answer a request after returning without answering; default 5 s. When it
    /// expires, the server answers with `timeoutResponse`.
    public var responseDeadline: Duration = .seconds(5)
    /// The answer given when `responseDeadline` expires; default 503 `unavailable` with `Retry-After`.
    public var timeoutResponse: HTTPResponse = .defaultTimeout
    /// When set, gives the `Retry-After` value of each answer the server makes itself (`timeoutResponse`,
    /// `bodyBudgetResponse`), so clients told to come back do not all come back in the same second; nil (the
    /// default) sends those responses' own header. Called on libmicrohttpd threads: keep it cheap.
    public var retryAfter: (@Sendable () -> String)?
    /// The memory libmicrohttpd may use per connection for the request line, headers and read buffer; default
    /// 16 KiB (Node.js's header limit). Requests with larger headers are refused by libmicrohttpd itself (414, 431);
    /// bodies are not held there, they stream to the handler. libmicrohttpd 0.9.75 zeroes the whole pool between two
    /// requests of a connection, so a larger pool costs a `memset` of its size per request.
    public var connectionMemoryLimit: Int = 16 * 1024
    /// The step by which libmicrohttpd grows a connection's read buffer; default 4 KiB.
    public var connectionMemoryIncrement: Int = 4 * 1024
    /// The `listen()` backlog of the server socket; default 1024.
    public var listenBacklog: Int = 1024
    /// How often the deadline reaper looks for overdue requests; default 100 ms. Deadlines fire up to this late.
    public var reaperInterval: Duration = .milliseconds(100)
    /// Receives libmicrohttpd's error log lines; nil (the default) silences them. Called on libmicrohttpd threads.
    public var logHandler: (@Sendable (String) -> Void)?
    /// Called once per request that reached the server's handler path, after it ends; nil by default.
    ///
    /// Runs on a libmicrohttpd worker thread, so it must be quick and must not block: update counters only.
    public var onRequestCompleted: (@Sendable (HTTPRequestCompletion) -> Void)?
    /// Called when a request is suspended and every open connection now holds a suspended request: until an answer
    /// goes out, no more requests can arrive on them. nil by default.
    ///
    /// A handler that batches work for a while (a Kafka producer's linger) can start it at once here: nothing more
    /// would join the batch. Runs on a libmicrohttpd worker thread, so it must be quick and must not block.
    public var onEveryConnectionWaiting: (@Sendable () -> Void)?

    /// Makes a configuration with the defaults; change fields as needed.
    public init() {}
}
