/// How long a PostgreSQL store waits for the server, so a stalled server, a half-open connection or a failover
/// surfaces as a store error instead of a sink that hangs.
///
/// Each value has a libpq or server setting of the same meaning, and a store URL can set that setting itself
/// (`?connect_timeout=5&keepalives_idle=10&options=-c%20statement_timeout%3D5s`), which wins over these defaults.
/// ``responseTimeout`` is the client's own bound, for a server that stops answering altogether (a stopped or
/// partitioned host whose kernel still acknowledges keepalives): past it the connection is dropped and made again.
public struct PostgresTimeouts: Sendable, Hashable {
    /// libpq `connect_timeout`: the longest a connection attempt may take. Default 10 s.
    public var connect: Duration = .seconds(10)
    /// libpq `keepalives_idle`: idle time before the first TCP keepalive. Default 30 s.
    public var keepalivesIdle: Duration = .seconds(30)
    /// libpq `keepalives_interval`: time between unanswered keepalives. Default 10 s.
    public var keepalivesInterval: Duration = .seconds(10)
    /// libpq `keepalives_count`: unanswered keepalives before the connection counts as lost. Default 3.
    public var keepalivesCount = 3
    /// libpq `tcp_user_timeout`: how long sent data may stay unacknowledged before the connection is lost.
    /// Default 60 s.
    public var tcpUserTimeout: Duration = .seconds(60)
    /// Server `statement_timeout`: the longest one statement may run. Default 30 s.
    public var statement: Duration = .seconds(30)
    /// Server `idle_in_transaction_session_timeout`: a session idle inside a transaction this long is ended, so a
    /// stalled client cannot hold row locks. Default 60 s.
    public var idleInTransaction: Duration = .seconds(60)
    /// The client's bound on waiting for any one answer (a statement, `COMMIT`); past it the connection is dropped
    /// and the call fails with ``RollupStoreError/Code/timedOut``. Default 45 s: longer than `statement`, so a
    /// server that answers gets to say why first.
    public var responseTimeout: Duration = .seconds(45)

    /// The defaults.
    public init() {}

    /// The libpq keywords these stand for, as defaults placed before the URL's own.
    var connectionKeywords: [(String, String)] {
        [
            ("connect_timeout", String(max(1, connect.components.seconds))),
            ("keepalives", "1"),
            ("keepalives_idle", String(max(1, keepalivesIdle.components.seconds))),
            ("keepalives_interval", String(max(1, keepalivesInterval.components.seconds))),
            ("keepalives_count", String(max(1, keepalivesCount))),
            ("tcp_user_timeout", String(Self.milliseconds(tcpUserTimeout))),
            ("fallback_application_name", "flowmeter"),
        ]
    }

    /// The server settings these stand for, as `-c NAME=VALUE` for libpq's `options`; those `urlOptions` already
    /// sets are left out, and `urlOptions` follows.
    func serverOptions(mergedWith urlOptions: String?) -> String {
        let own = [
            ("statement_timeout", Self.milliseconds(statement)),
            ("idle_in_transaction_session_timeout", Self.milliseconds(idleInTransaction)),
        ]
        let given = urlOptions ?? ""
        var parts = own.filter { !given.contains($0.0) }.map { "-c \($0.0)=\($0.1)" }
        if !given.isEmpty { parts.append(given) }
        return parts.joined(separator: " ")
    }

    private static func milliseconds(_ duration: Duration) -> Int64 {
        max(0, Int64((duration / .milliseconds(1)).rounded()))
    }
}
