import Synchronization
import TestSupport
import Testing

@testable import HTTPServer

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

/// The server's own answers (a missed deadline, a spent body budget) take their `Retry-After` from the
/// configuration's `retryAfter` per answer, so a herd turned away together is told to come back at different times.
@Suite struct ServerRetryAfterTests {
    @Test func theServersOwnAnswersDrawTheirRetryAfterPerAnswer() {
        var configuration = HTTPServerConfiguration()
        #expect(configuration.serverAnswer(configuration.timeoutResponse).headers["Retry-After"] == "1")
        let draws = Mutex(0)
        configuration.retryAfter = {
            draws.withLock { count in
                count += 1
                return String(2 + count)
            }
        }
        let first = configuration.serverAnswer(configuration.timeoutResponse).headers["Retry-After"]
        let second = configuration.serverAnswer(configuration.bodyBudgetResponse).headers["Retry-After"]
        #expect(first == "3" && second == "4")
        // A response without Retry-After is left alone.
        let plain = HTTPResponse(status: .ok)
        #expect(configuration.serverAnswer(plain).headers["Retry-After"] == nil)
    }
}
