import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A server binary a test runs as a ``ChildProcess`` on a loopback port, with a bounded wait for its readiness
/// endpoint.
///
/// `start(_:readyPath:within:attempts:arguments:)` picks a free port, starts the binary and waits until the endpoint
/// answers 200, trying fresh ports when one is taken meanwhile. Stop it with ``ChildProcess/terminate(timeout:)`` or
/// ``ChildProcess/stop(timeout:)`` on ``child``; releasing the last reference kills it.
public final class ServerProcess: Sendable {
    /// The loopback port the server was told to listen on.
    public let port: UInt16
    /// The running binary: signal, wait for and read it here.
    public let child: ChildProcess
    // A directory the server uses (its spool), removed with this instance, after the child (declared first) is gone.
    private let scratch: TemporaryDirectory?

    /// Starts `path` with `arguments` (which name `port`) without waiting for it; `scratch` is kept (and removed)
    /// with the instance.
    public init(_ path: String, port: UInt16, arguments: [String], keeping scratch: TemporaryDirectory? = nil) throws {
        self.port = port
        self.scratch = scratch
        child = try ChildProcess(path, arguments)
    }

    /// Starts `path` with `arguments(port)` on a free loopback port and waits (at most `within`, and at least a minute
    /// whatever a caller asks, since a busy machine starts servers slowly) for `GET readyPath` to answer 200, on up to
    /// `attempts` ports; throws with the server's standard error when it never does. A server that exits (its port
    /// taken meanwhile) ends its wait at once. `scratch` is kept with the server that started.
    public static func start(
        _ path: String, readyPath: String = "/healthz", within: Duration = .seconds(30), attempts: Int = 1,
        keeping scratch: TemporaryDirectory? = nil, arguments: (UInt16) -> [String]
    ) async throws -> ServerProcess {
        var lastFailure = ""
        for _ in 0..<attempts {
            let port = try freeLoopbackPort()
            let server = try ServerProcess(path, port: port, arguments: arguments(port), keeping: scratch)
            if await server.waitUntilReady(path: readyPath, timeout: max(within, .seconds(60))) { return server }
            let answer: String
            do {
                answer = "answered \(try await server.get(readyPath).status)"
            } catch {
                answer = "\(error)"
            }
            let exited = server.child.isRunning ? "still running" : "exited with \(server.child.status)"
            server.child.terminate(timeout: .seconds(5))
            lastFailure = "port \(port), last try: \(answer), \(exited); stderr: \(server.child.errors.suffix(2000))"
        }
        let name = URL(fileURLWithPath: path).lastPathComponent
        throw ChildProcess.Failure(
            "\(name) did not answer \(readyPath) with 200 within \(within) on \(attempts) port(s): \(lastFailure)")
    }

    /// Starts `count` servers of `path` one after the other, the `index`-th with `arguments(index, port)` (each as
    /// ``start(_:readyPath:within:attempts:keeping:arguments:)`` does); when one does not come up, those already
    /// started are stopped before the error is thrown.
    public static func start(
        _ count: Int, _ path: String, readyPath: String = "/healthz", within: Duration = .seconds(30),
        attempts: Int = 1, arguments: (Int, UInt16) -> [String]
    ) async throws -> [ServerProcess] {
        var started: [ServerProcess] = []
        do {
            for index in 0..<count {
                started.append(
                    try await start(path, readyPath: readyPath, within: within, attempts: attempts) { port in
                        arguments(index, port)
                    })
            }
        } catch {
            for server in started { server.child.terminate(timeout: .seconds(15)) }
            throw error
        }
        return started
    }

    /// Waits (at most `timeout`) until `GET path` answers 200; false when it did not or the process exited.
    public func waitUntilReady(
        path: String = "/healthz", timeout: Duration, interval: Duration = .milliseconds(100)
    ) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline && child.isRunning {
            if let answer = try? await get(path), answer.status == 200 { return true }
            try? await Task.sleep(for: interval)
        }
        return false
    }

    /// GETs `path` from the server on a connection of its own.
    public func get(_ path: String, readTimeout: Duration = .seconds(5)) async throws -> HTTPTestResponse {
        let port = port
        return try await HTTPTestClient.onThread {
            let client = try HTTPTestClient(port: port, readTimeout: readTimeout)
            defer { client.close() }
            return try client.request("GET", path, headers: [("Connection", "close")])
        }
    }

    /// A loopback TCP port that was free a moment ago, for a server that binds it by number.
    ///
    /// Drawn below the kernel's ephemeral range (`/proc/sys/net/ipv4/ip_local_port_range`, 32768–60999 by default)
    /// and checked by binding it: the ports the kernel hands to `bind(0)` and `connect` come from that range, so a
    /// port given out here is never one that librdkafka's mock brokers (which bind port 0) listen on, or bind again
    /// as they go down, or that an outgoing connection uses, however long the server takes to bind it. Port 0's own
    /// answer when there is no room below the range, or no port there is free.
    public static func freeLoopbackPort() throws -> UInt16 {
        let ephemeralLow = ephemeralPortRangeStart()
        if ephemeralLow > 2_048 {
            let below = max(1_024, Int(ephemeralLow) - 12_768)..<Int(ephemeralLow)
            for _ in 0..<200 {
                let port = UInt16(Int.random(in: below))
                if (try? bindLoopback(port: port)) == port { return port }
            }
        }
        return try bindLoopback(port: 0)
    }

    /// The first port of the kernel's ephemeral range; 32768 when it cannot be read.
    private static func ephemeralPortRangeStart() -> UInt16 {
        let text = try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)
        return text?.split(whereSeparator: \.isWhitespace).first.flatMap { UInt16($0) } ?? 32_768
    }

    /// Binds a socket to `port` of 127.0.0.1 (0: one the kernel picks), releases it and returns the port bound.
    private static func bindLoopback(port: UInt16) throws -> UInt16 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw ChildProcess.Failure("socket() failed: errno \(errno)") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0
            }
        }
        guard named else { throw ChildProcess.Failure("bind() failed: errno \(errno)") }
        return UInt16(bigEndian: address.sin_port)
    }
}
