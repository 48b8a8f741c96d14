import Foundation
import Glibc

/// A blocking HTTP/1.1 client over one raw POSIX socket, for tests that need control HTTP libraries hide:
/// trickled bytes, bodies that never end, and watching the server close the connection.
///
/// Not thread-safe: one client per thread. Every read is bounded by `readTimeout`, so a hung server fails a test
/// instead of hanging it. Run blocking work off the cooperative pool with `HTTPTestClient.onThread(_:)`.
public final class HTTPTestClient {
    /// The server port this client is connected to.
    public let port: UInt16
    /// The longest any single read waits.
    public let readTimeout: Duration
    private var descriptor: Int32
    private var pending: [UInt8] = []

    /// Connects to `host:port`; throws `HTTPTestClientError.connectFailed` when the server refuses.
    public init(port: UInt16, host: String = "127.0.0.1", readTimeout: Duration = .seconds(5)) throws {
        self.port = port
        self.readTimeout = readTimeout
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw HTTPTestClientError.connectFailed(errno: errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        inet_pton(AF_INET, host, &address.sin_addr)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            Glibc.close(descriptor)
            descriptor = -1
            throw HTTPTestClientError.connectFailed(errno: code)
        }
        var noDelay: Int32 = 1
        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit {
        close()
    }

    /// Closes the socket; safe to call more than once.
    public func close() {
        if descriptor >= 0 {
            Glibc.close(descriptor)
            descriptor = -1
        }
    }

    // MARK: Sending

    /// Sends raw bytes; throws `HTTPTestClientError.closedByPeer` when the server has closed the connection.
    public func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if sent < 0 {
                if errno == EINTR { continue }
                if errno == EPIPE || errno == ECONNRESET { throw HTTPTestClientError.closedByPeer }
                throw HTTPTestClientError.sendFailed(errno: errno)
            }
            offset += sent
        }
    }

    /// Shuts down the sending side (a TCP half-close): the server reads end of stream after what was sent, so a
    /// request left incomplete on purpose ends at once instead of at the server's timeout. Reading still works.
    public func finishSending() {
        if descriptor >= 0 { shutdown(descriptor, Int32(SHUT_WR)) }
    }

    /// Sends a string's UTF-8 bytes.
    public func send(_ text: String) throws {
        try send(Array(text.utf8))
    }

    /// The bytes of a request head: request line, `Host`, the given headers, and the blank line.
    public static func head(_ method: String, _ path: String, headers: [(String, String)]) -> [UInt8] {
        var text = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers {
            text += "\(name): \(value)\r\n"
        }
        text += "\r\n"
        return Array(text.utf8)
    }

    /// Sends a request with a `Content-Length` body (none when `body` is nil).
    public func sendRequest(
        _ method: String = "GET",
        _ path: String,
        headers: [(String, String)] = [],
        body: [UInt8]? = nil
    ) throws {
        var allHeaders = headers
        if let body {
            allHeaders.append(("Content-Length", String(body.count)))
        }
        var bytes = Self.head(method, path, headers: allHeaders)
        if let body {
            bytes.append(contentsOf: body)
        }
        try send(bytes)
    }

    /// Sends a request whose body uses chunked transfer coding; `finish` false leaves the body open.
    public func sendChunkedRequest(
        _ method: String = "POST",
        _ path: String,
        headers: [(String, String)] = [],
        chunks: [[UInt8]],
        finish: Bool = true
    ) throws {
        try send(Self.head(method, path, headers: headers + [("Transfer-Encoding", "chunked")]))
        for chunk in chunks where !chunk.isEmpty {
            try send(Array("\(String(chunk.count, radix: 16))\r\n".utf8) + chunk + Array("\r\n".utf8))
        }
        if finish {
            try send("0\r\n\r\n")
        }
    }

    /// Sends one request and reads its response.
    public func request(
        _ method: String = "GET",
        _ path: String,
        headers: [(String, String)] = [],
        body: [UInt8]? = nil
    ) throws -> HTTPTestResponse {
        try sendRequest(method, path, headers: headers, body: body)
        return try readResponse()
    }

    /// Sends `bytes` one at a time, pausing `interval` between them, until done or the server closes the
    /// connection; returns how many bytes were sent before the close was seen.
    public func trickle(_ bytes: [UInt8], interval: Duration) throws -> Int {
        for (index, byte) in bytes.enumerated() {
            if isClosedByPeer() { return index }
            do {
                try send([byte])
            } catch HTTPTestClientError.closedByPeer {
                return index
            }
            Thread.sleep(
                forTimeInterval: Double(interval.components.seconds)
                    + Double(interval.components.attoseconds) / 1e18)
        }
        return bytes.count
    }

    // MARK: Receiving

    /// Reads one response (headers, then a `Content-Length`, chunked or read-until-close body).
    ///
    /// Throws `timedOut` when the server says nothing for `readTimeout`, `closedByPeer` when it closes first.
    public func readResponse() throws -> HTTPTestResponse {
        let headEnd = try readUntil(Array("\r\n\r\n".utf8))
        let headBytes = Array(pending[..<headEnd])
        pending.removeFirst(headEnd + 4)
        let lines = String(decoding: headBytes, as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ", maxSplits: 2)
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else {
            throw HTTPTestClientError.malformed(lines[0])
        }
        var headers: [(name: String, value: String)] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.append(
                (
                    name: String(line[..<colon]),
                    value: line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                ))
        }
        var response = HTTPTestResponse(status: status, headers: headers, body: [])
        if let length = response.header("Content-Length").flatMap(Int.init) {
            try fill(atLeast: length)
            response.body = Array(pending[..<length])
            pending.removeFirst(length)
        } else if response.header("Transfer-Encoding")?.lowercased() == "chunked" {
            response.body = try readChunkedBody()
        } else if status >= 200, status != 204, status != 304 {
            response.body = try readUntilClose()
        }
        return response
    }

    /// Waits up to `timeout` for the server to close the connection; returns whatever bytes arrived first.
    ///
    /// Throws `timedOut` when the connection is still open at the end.
    public func waitForClose(timeout: Duration) throws -> [UInt8] {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        var received = pending
        pending = []
        while ContinuousClock.now < deadline {
            let remaining = ContinuousClock.now.duration(to: deadline)
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(
                clamping: remaining.components.seconds * 1000
                    + remaining.components.attoseconds / 1_000_000_000_000_000 + 1)
            guard poll(&poller, 1, milliseconds) > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = recv(descriptor, &chunk, chunk.count, 0)
            if count <= 0 {
                if count < 0, errno == EINTR { continue }
                return received
            }
            received.append(contentsOf: chunk[..<count])
        }
        throw HTTPTestClientError.timedOut
    }

    /// Waits up to `timeout` for bytes and returns what arrived (empty when nothing did), or nil once the server has
    /// closed the connection (or reset it) and everything before the close was returned.
    public func receive(timeout: Duration) throws -> [UInt8]? {
        if !pending.isEmpty {
            defer { pending = [] }
            return pending
        }
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(
            clamping: timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        while true {
            let ready = poll(&poller, 1, milliseconds)
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else { return [] }
            break
        }
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        let count = recv(descriptor, &chunk, chunk.count, 0)
        if count < 0 {
            if errno == ECONNRESET { return nil }
            throw HTTPTestClientError.receiveFailed(errno: errno)
        }
        return count == 0 ? nil : Array(chunk[..<count])
    }

    /// Whether the server has closed the connection (without waiting).
    public func isClosedByPeer() -> Bool {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, 0) > 0 else { return false }
        if poller.revents & Int16(POLLERR | POLLHUP) != 0 { return true }
        var byte: UInt8 = 0
        let count = recv(descriptor, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        return count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
    }

    private func readChunkedBody() throws -> [UInt8] {
        var body: [UInt8] = []
        while true {
            let lineEnd = try readUntil(Array("\r\n".utf8))
            let sizeText = String(decoding: pending[..<lineEnd], as: UTF8.self).split(separator: ";")[0]
            pending.removeFirst(lineEnd + 2)
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else {
                throw HTTPTestClientError.malformed("chunk size '\(sizeText)'")
            }
            if size == 0 {
                let trailerEnd = try readUntil(Array("\r\n".utf8))
                pending.removeFirst(trailerEnd + 2)
                return body
            }
            try fill(atLeast: size + 2)
            body.append(contentsOf: pending[..<size])
            pending.removeFirst(size + 2)
        }
    }

    private func readUntilClose() throws -> [UInt8] {
        while try receiveSome() {}
        defer { pending = [] }
        return pending
    }

    private func readUntil(_ marker: [UInt8]) throws -> Int {
        var searchFrom = 0
        while true {
            if pending.count >= marker.count {
                for start in searchFrom...(pending.count - marker.count)
                where pending[start..<(start + marker.count)].elementsEqual(marker) {
                    return start
                }
                searchFrom = pending.count - marker.count + 1
            }
            guard try receiveSome() else { throw HTTPTestClientError.closedByPeer }
        }
    }

    private func fill(atLeast count: Int) throws {
        while pending.count < count {
            guard try receiveSome() else { throw HTTPTestClientError.closedByPeer }
        }
    }

    /// Reads what is available, waiting up to `readTimeout`; returns false at end of stream.
    private func receiveSome() throws -> Bool {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(
            clamping: readTimeout.components.seconds * 1000
                + readTimeout.components.attoseconds / 1_000_000_000_000_000)
        while true {
            let ready = poll(&poller, 1, milliseconds)
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else { throw HTTPTestClientError.timedOut }
            break
        }
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        let count = recv(descriptor, &chunk, chunk.count, 0)
        if count < 0 {
            if errno == ECONNRESET { return false }
            throw HTTPTestClientError.receiveFailed(errno: errno)
        }
        guard count > 0 else { return false }
        pending.append(contentsOf: chunk[..<count])
        return true
    }

    /// Runs blocking client work on its own thread, keeping it off Swift's cooperative pool.
    public static func onThread<Result: Sendable>(
        _ body: @escaping @Sendable () throws -> Result
    ) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                continuation.resume(with: Swift.Result { try body() })
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
    }
}
