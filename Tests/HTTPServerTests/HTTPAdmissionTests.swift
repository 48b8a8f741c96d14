import HTTPServer
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The admission check and the body budget: decided from the headers, before any body byte is read.
@Suite struct HTTPAdmissionTests {
    private static func admitting(budget: Int, perClient: Int) -> HTTPServerConfiguration {
        var configuration = ServerFixture.configuration()
        configuration.maxBodyBytesInFlight = budget
        configuration.maxBodyBytesInFlightPerClient = perClient
        configuration.admission = { head in
            guard let key = head.headers["x-key"] else {
                return .reject(.error(status: .unauthorized, code: "unauthorized", message: "No key."))
            }
            return .admit(client: key)
        }
        return configuration
    }

    @Test func aRejectedRequestIsAnsweredFromItsHeadersAndClosed() async throws {
        let completions = Mutex<[HTTPRequestCompletion]>([])
        var configuration = Self.admitting(budget: 1 << 20, perClient: 1 << 20)
        configuration.onRequestCompleted = { completion in completions.withLock { $0.append(completion) } }
        try await ServerFixture.withServer(configuration) { server in
            let port = server.port
            let (response, closed) = try await HTTPTestClient.onThread {
                let client = try HTTPTestClient(port: port)
                // Headers only: an answer that arrives proves the server did not wait for the body.
                try client.send(HTTPTestClient.head("POST", "/echo", headers: [("Content-Length", "100000")]))
                let response = try client.readResponse()
                return (response, (try? client.waitForClose(timeout: .seconds(30))) != nil)
            }
            #expect(response.status == 401)
            #expect(response.header("Connection")?.lowercased() == "close")
            #expect(closed)
            #expect(server.statistics.admissionRejections == 1)
            #expect(server.statistics.bodyBytesInFlight == 0)
        }
        #expect(completions.withLock { $0.map(\.status) } == [.unauthorized])
    }

    @Test func anAdmittedRequestIsHandledAndReportsItsClient() async throws {
        let completions = Mutex<[HTTPRequestCompletion]>([])
        var configuration = Self.admitting(budget: 1 << 20, perClient: 1 << 20)
        configuration.onRequestCompleted = { completion in completions.withLock { $0.append(completion) } }
        try await ServerFixture.withServer(configuration) { server in
            let port = server.port
            let response = try await HTTPTestClient.onThread {
                let client = try HTTPTestClient(port: port)
                defer { client.close() }
                return try client.request(
                    "POST", "/echo", headers: [("X-Key", "a")], body: Array(repeating: 1, count: 500))
            }
            #expect(response.status == 200)
            #expect(response.body.count == 500)
            #expect(server.statistics.bodyBytesInFlight == 0)
        }
        #expect(completions.withLock { $0.map(\.client) } == ["a"])
    }

    @Test func bodiesPastTheClientsBudgetGet503FromTheirHeadersAndOthersGoOn() async throws {
        try await ServerFixture.withServer(Self.admitting(budget: 1 << 20, perClient: 1_000)) { server in
            let port = server.port
            let (held, refused, other) = try await HTTPTestClient.onThread {
                // The first request of client a declares 800 bytes and sends none of them: its reservation stands.
                let holder = try HTTPTestClient(port: port)
                defer { holder.close() }
                try holder.send(
                    HTTPTestClient.head("POST", "/echo", headers: [("X-Key", "a"), ("Content-Length", "800")]))
                // The second request goes only once the server holds the first one's reservation: two connections'
                // heads reach worker threads in either order, and the test is about the one that comes second.
                let deadline = ContinuousClock.now + Eventually.hangGuard
                while server.statistics.bodyBytesInFlight < 800, ContinuousClock.now < deadline { usleep(1_000) }
                let refusedClient = try HTTPTestClient(port: port)
                defer { refusedClient.close() }
                try refusedClient.send(
                    HTTPTestClient.head("POST", "/echo", headers: [("X-Key", "a"), ("Content-Length", "800")]))
                let refused = try refusedClient.readResponse()
                let otherClient = try HTTPTestClient(port: port)
                defer { otherClient.close() }
                let other = try otherClient.request(
                    "POST", "/echo", headers: [("X-Key", "b")], body: Array(repeating: 2, count: 800))
                try holder.send(Array(repeating: 3, count: 800))
                let held = try holder.readResponse()
                return (held, refused, other)
            }
            #expect(refused.status == 503)
            #expect(refused.header("Retry-After") != nil)
            #expect(other.status == 200)
            #expect(held.status == 200)
            #expect(server.statistics.bodyBudgetRejections == 1)
            #expect(server.statistics.bodyBytesInFlight == 0)
        }
    }
}
