import Glibc
import HTTPServer
import TestSupport
import Testing

@Suite struct HTTPServerLimitsTests {
    private static func limited() -> HTTPServerConfiguration {
        var configuration = ServerFixture.configuration()
        configuration.maxBodyBytes = 1024
        configuration.requestDeadline = .seconds(2)
        configuration.inactivityTimeout = .seconds(10)
        return configuration
    }

    @Test func declaredOversizedBodyGets413BeforeTheBodyIsSent() async throws {
        try await ServerFixture.withServer(Self.limited()) { server in
            let port = server.port
            let (response, closedAfter) = try await HTTPTestClient.onThread {
                let client = try HTTPTestClient(port: port)
                // Headers only: a 413 that arrives proves the server did not wait for the body.
                try client.send(HTTPTestClient.head("POST", "/echo", headers: [("Content-Length", "1000000")]))
                let response = try client.readResponse()
                return (response, (try? client.waitForClose(timeout: .seconds(3))) != nil)
            }
            #expect(response.status == 413)
            #expect(response.header("Content-Type") == "application/json")
            #expect(response.bodyText.hasPrefix(#"{"error":"too_large""#))
            #expect(response.header("Cache-Control") == "no-store")
            #expect(closedAfter)
            #expect(server.statistics.bodiesTooLarge == 1)
        }
    }

    // The connection's memory pool holds the request line, headers and read buffer, not the body; libmicrohttpd
    // zeroes it between requests, so it is kept small (16 KiB). Headers of 8 KiB and a body 16 times the pool pass
    // twice on one connection; a header past the pool is refused and the server goes on.
    @Test func defaultConnectionMemoryTakesLargeHeadersAndBodiesAndRefusesLargerHeaders() async throws {
        #expect(HTTPServerConfiguration().connectionMemoryLimit == 16 * 1024)
        try await ServerFixture.withServer { server in
            let port = server.port
            let body = (0..<(256 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            let (first, second, oversized, next) = try await HTTPTestClient.onThread {
                let client = try HTTPTestClient(port: port)
                let headers = [
                    ("X-Custom", String(repeating: "h", count: 4096)),
                    ("X-Padding", String(repeating: "p", count: 4096)),
                ]
                let first = try client.request("POST", "/echo", headers: headers, body: body)
                let second = try client.request("POST", "/echo", headers: headers, body: body)
                let oversized = try HTTPTestClient(port: port).request(
                    "GET", "/healthz", headers: [("X-Padding", String(repeating: "x", count: 20_000))])
                let next = try HTTPTestClient(port: port).request("GET", "/healthz")
                return (first, second, oversized, next)
            }
            for response in [first, second] {
                #expect(response.status == 200)
                #expect(response.header("X-Body-Length") == String(body.count))
                #expect(response.header("X-Seen-Header") == String(repeating: "h", count: 4096))
                #expect(response.body == body)
            }
            #expect(oversized.status == 431)
            #expect(next.status == 200)
        }
    }

    @Test func chunkedBodyOverLimitClosesTheConnectionWithoutResponse() async throws {
        try await ServerFixture.withServer(Self.limited()) { server in
            let port = server.port
            let (bytesBeforeClose, next) = try await HTTPTestClient.onThread {
                let client = try HTTPTestClient(port: port)
                let chunk = [UInt8](repeating: 0x41, count: 512)
                do {
                    try client.sendChunkedRequest("POST", "/echo", chunks: [chunk, chunk, chunk, chunk], finish: false)
                } catch HTTPTestClientError.closedByPeer {}
                let received = try client.waitForClose(timeout: .seconds(5))
                let next = try HTTPTestClient(port: port).request("GET", "/healthz")
                return (received, next)
            }
            #expect(bytesBeforeClose.isEmpty)
            #expect(next.status == 200)
            #expect(server.statistics.bodiesTooLarge == 1)
        }
    }

    @Test func bodyTricklingPastTheRequestDeadlineIsCutOff() async throws {
        try await ServerFixture.withServer(Self.limited()) { server in
            let port = server.port
            let sent = try await HTTPTestClient.onThread {
                let client = try HTTPTestClient(port: port)
                try client.send(HTTPTestClient.head("POST", "/echo", headers: [("Content-Length", "40")]))
                // 40 bytes at 300 ms would take 12 s; the inactivity timeout (10 s) never fires in between.
                return try client.trickle([UInt8](repeating: 0x42, count: 40), interval: .milliseconds(300))
            }
            #expect(sent < 40)
            #expect(server.statistics.receiveDeadlineExpirations >= 1)
        }
    }

    @Test func headersTricklingPastTheRequestDeadlineAreCutOff() async throws {
        try await ServerFixture.withServer(Self.limited()) { server in
            let port = server.port
            let head = HTTPTestClient.head("GET", "/healthz", headers: [("X-Padding", "abcdefghijklmnopqrstuvwxyz")])
            let sent = try await HTTPTestClient.onThread {
                try HTTPTestClient(port: port).trickle(head, interval: .milliseconds(300))
            }
            #expect(sent < head.count)
            #expect(server.statistics.receiveDeadlineExpirations >= 1)
            let next = try await HTTPTestClient.onThread { try HTTPTestClient(port: port).request("GET", "/healthz") }
            #expect(next.status == 200)
        }
    }

    @Test func perIPLimitRefusesExcessConnections() async throws {
        var configuration = ServerFixture.configuration()
        configuration.perIPConnectionLimit = 4
        try await ServerFixture.withServer(configuration) { server in
            let port = server.port
            let (admitted, refusedBytes, afterRelease) = try await HTTPTestClient.onThread {
                let clients = try (0..<4).map { _ in try HTTPTestClient(port: port) }
                let admitted = try clients.map { try $0.request("GET", "/healthz").status }
                let excess = try HTTPTestClient(port: port)
                try? excess.sendRequest("GET", "/healthz")
                let refusedBytes = try excess.waitForClose(timeout: .seconds(30))
                clients[0].close()
                // The server notices the close asynchronously: retry until it has (bounded by the hang guard).
                var afterRelease: Int?
                let deadline = ContinuousClock.now + Eventually.hangGuard
                while afterRelease == nil, ContinuousClock.now < deadline {
                    usleep(20_000)
                    afterRelease = try? HTTPTestClient(port: port).request("GET", "/healthz").status
                }
                return (admitted, refusedBytes, afterRelease)
            }
            #expect(admitted == [200, 200, 200, 200])
            #expect(refusedBytes.isEmpty)
            #expect(afterRelease == 200)
        }
    }
}
