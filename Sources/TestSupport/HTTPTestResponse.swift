/// A response read by `HTTPTestClient`.
public struct HTTPTestResponse: Sendable {
    /// The status code.
    public var status: Int
    /// The header fields in order.
    public var headers: [(name: String, value: String)]
    /// The body, with any chunked coding removed.
    public var body: [UInt8]

    /// The first header with that name in any case, or nil.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// The body decoded as UTF-8.
    public var bodyText: String {
        String(decoding: body, as: UTF8.self)
    }
}

/// Why an `HTTPTestClient` call failed.
public enum HTTPTestClientError: Error, Equatable {
    /// `connect()` failed, for example with `ECONNREFUSED` when nothing listens.
    case connectFailed(errno: Int32)
    /// `send()` failed for a reason other than the peer closing.
    case sendFailed(errno: Int32)
    /// `recv()` failed for a reason other than the peer closing.
    case receiveFailed(errno: Int32)
    /// The server closed the connection.
    case closedByPeer
    /// Nothing arrived within the read timeout.
    case timedOut
    /// The response was not valid HTTP/1.1.
    case malformed(String)
}
