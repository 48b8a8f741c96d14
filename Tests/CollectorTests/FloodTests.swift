import Collector
import Foundation
import Glibc
import TestSupport
import Testing

/// docs/reliability.md H6 and H7, scaled to a 2-core test machine: slow clients and connection floods must not starve
/// legitimate clients, and the server must give back every connection it took.
@Suite(.serialized) struct FloodTests {
    /// How a slowloris client starts before it trickles one byte a second.
    enum Opening: String, CaseIterable, Sendable {
        /// A request line and part of a header, which it never finishes.
        case partialHead
        /// A whole POST head announcing 100,000 body bytes, then the body, slowly.
        case slowBody

        var bytes: [UInt8] {
            switch self {
            case .partialHead:
                Array("POST /v1/diagnostics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: a".utf8)
            case .slowBody:
                HTTPTestClient.head(
                    "POST", "/v1/diagnostics",
                    headers: [
                        ("Authorization", "Bearer \(CollectorFixture.shopKey)"), ("Content-Type", "application/json"),
                        ("Content-Length", "100000"),
                    ])
            }
        }
    }

    /// H6: 200 slowloris clients trickle a byte a second, often enough to keep resetting an inactivity timeout. A
    /// legitimate client is served meanwhile, and with a 2 s request deadline the server closes every trickler.
    @Test(arguments: Opening.allCases)
    func tricklersAreClosedAtTheDeadlineWhileOthersAreServed(opening: Opening) async throws {
        let fixture = try CollectorFixture { configuration in
            configuration.requestDeadline = .seconds(2)
            configuration.perIPConnectionLimit = 400
        }
        let port = fixture.port
        let head = opening.bytes
        let trickling = Task {
            try await HTTPTestClient.onThread {
                // Ends as soon as the server closed every trickler; the bound only ends a server that never does.
                try Self.trickle(sockets: 200, opening: head, port: port, for: .seconds(60))
            }
        }
        var statuses: [Int] = []
        for index in 0..<10 {
            statuses.append(try await fixture.post(Batches.good(events: 2, id: "h6-\(index)")).status)
            try await Task.sleep(for: .milliseconds(300))
        }
        let (opened, closed) = try await trickling.value
        #expect(statuses == Array(repeating: 202, count: 10), "legitimate batches: \(statuses)")
        #expect(opened == 200)
        #expect(closed == opened, "\(closed) of \(opened) tricklers closed by the server")
        #expect(try await fixture.post(Batches.good()).status == 202)
        await fixture.shutdown()
    }

    /// H6: the per-IP cap. With 8 connections from 127.0.0.1 held open, the 9th is closed without an answer, and
    /// releasing one lets a new connection in.
    @Test func theNinthConnectionFromOneAddressIsClosed() async throws {
        let fixture = try CollectorFixture { $0.perIPConnectionLimit = 8 }
        let port = fixture.port
        let (admitted, refused, afterRelease) = try await HTTPTestClient.onThread {
            let clients = try (0..<8).map { _ in try HTTPTestClient(port: port) }
            let admitted = try clients.map { try $0.request("GET", "/healthz").status }
            let excess = try HTTPTestClient(port: port)
            try? excess.sendRequest("GET", "/healthz")
            let refused = try excess.waitForClose(timeout: .seconds(30))
            clients[0].close()
            // The server notices the close asynchronously: retry until it has (bounded by the suite's hang guard).
            var afterRelease: Int?
            let deadline = ContinuousClock.now + Eventually.hangGuard
            while afterRelease == nil, ContinuousClock.now < deadline {
                usleep(20_000)
                afterRelease = try? HTTPTestClient(port: port, readTimeout: .seconds(5)).request("GET", "/healthz")
                    .status
            }
            return (admitted, refused, afterRelease)
        }
        #expect(admitted == Array(repeating: 200, count: 8))
        #expect(refused.isEmpty, "the 9th connection got: \(String(decoding: refused, as: UTF8.self))")
        #expect(afterRelease == 200)
        await fixture.shutdown()
    }

    /// H7: 200 connections at once against a limit of 32. Afterwards the server answers `/healthz`, takes a batch,
    /// and holds no more sockets than before the flood. (How soon it recovers is a timing claim, so no test makes it.)
    @Test func aFloodBeyondTheConnectionLimitLeavesTheServerHealthy() async throws {
        let fixture = try CollectorFixture { $0.connectionLimit = 32 }
        let port = fixture.port
        let baseline = try ServerSockets.count(port: port)
        // Sampled while the flood holds its connections: the server must never hold more than the limit.
        async let peak = HTTPTestClient.onThread {
            var peak = 0
            for _ in 0..<20 {
                peak = max(peak, (try? ServerSockets.count(port: port)) ?? 0)
                usleep(50_000)
            }
            return peak
        }
        let opened = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<4 {
                group.addTask { try await HTTPTestClient.onThread { Self.flood(port: port, connections: 50) } }
            }
            return try await group.reduce(0, +)
        }
        let held = try await peak
        print("H7: \(opened) of 200 connects succeeded; the server held \(baseline) sockets before, \(held) at most")
        #expect(held <= baseline + 32, "the server held \(held) sockets with a limit of 32 connections")
        let healthy = try await HTTPTestClient.onThread {
            let deadline = ContinuousClock.now + Eventually.hangGuard
            while ContinuousClock.now < deadline {
                let status = try? HTTPTestClient(port: port, readTimeout: .seconds(1)).request("GET", "/healthz").status
                if status == 200 { return true }
                usleep(50_000)
            }
            return false
        }
        #expect(healthy, "/healthz answers 200 after the flood")
        #expect(try await fixture.post(Batches.good()).status == 202)
        var after = try ServerSockets.count(port: port)
        _ = try await eventually(every: .milliseconds(100)) {
            after = try ServerSockets.count(port: port)
            return after <= baseline + 2
        }
        #expect(after <= baseline + 2, "server sockets: \(after) after the flood, \(baseline) before")
        await fixture.shutdown()
    }

    /// Opens `connections` connections, starts a request on each, holds them briefly, then closes them all; returns
    /// how many connects succeeded.
    private static func flood(port: UInt16, connections: Int) -> Int {
        var clients: [HTTPTestClient] = []
        for _ in 0..<connections {
            guard let client = try? HTTPTestClient(port: port, readTimeout: .milliseconds(100)) else { continue }
            try? client.sendRequest("GET", "/healthz")
            clients.append(client)
        }
        usleep(500_000)
        for client in clients { client.close() }
        return clients.count
    }

    /// Opens `sockets` connections, sends `opening` on each, then one more byte a second on every one the server
    /// has not closed, for at most `duration`; returns how many opened and how many the server closed.
    private static func trickle(sockets: Int, opening: [UInt8], port: UInt16, for duration: Duration) throws -> (
        opened: Int, closed: Int
    ) {
        let deadline = ContinuousClock.now + duration
        var open: [HTTPTestClient] = []
        for _ in 0..<sockets {
            let client = try HTTPTestClient(port: port)
            try client.send(opening)
            open.append(client)
        }
        var closed = 0
        while !open.isEmpty, ContinuousClock.now < deadline {
            usleep(1_000_000)
            open.removeAll { client in
                let gone: Bool
                if client.isClosedByPeer() {
                    gone = true
                } else {
                    do {
                        // A letter extends the unfinished header value, or the body.
                        try client.send([0x61])
                        gone = false
                    } catch {
                        gone = true
                    }
                }
                if gone {
                    closed += 1
                    client.close()
                }
                return gone
            }
        }
        for client in open { client.close() }
        return (sockets, closed)
    }
}

/// The sockets this process holds whose local port is a given server port: the server's listener and the
/// connections it accepted, found by asking each socket in `/proc/self/fd` for its local address.
///
/// Counting only the server's port keeps tests running in parallel (their own sockets and brokers) out of the count.
/// (`/proc/net/tcp` would be simpler, but sandboxed kernels list only listeners there.)
enum ServerSockets {
    static func count(port: UInt16) throws -> Int {
        var count = 0
        for entry in try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
            guard let descriptor = Int32(entry),
                let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(entry)"),
                target.hasPrefix("socket:")
            else { continue }
            var address = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let result = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
            }
            // A descriptor another test closed meanwhile fails here and is simply not counted.
            if result == 0, address.sin_family == sa_family_t(AF_INET), UInt16(bigEndian: address.sin_port) == port {
                count += 1
            }
        }
        return count
    }
}
