import Dispatch
import HTTPServer
import TestSupport
import Testing

@Suite struct HTTPServerSuspensionTests {
    @Test func answersFromAnotherThreadResumeManyConcurrentRequests() async throws {
        var router = HTTPRouter()
        router.add(.post, "/later") { request, responder in
            let length = request.body.count
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) {
                responder.respond(.json(status: .accepted, #"{"accepted":\#(length)}"#))
            }
        }
        try await ServerFixture.withServer(router: router) { server in
            let port = server.port
            let bodies = try await HTTPTestClient.onThread { () -> [String] in
                let clients = try (0..<64).map { _ in try HTTPTestClient(port: port) }
                var bodies: [String] = []
                for round in 0..<3 {
                    for (index, client) in clients.enumerated() {
                        try client.sendRequest("POST", "/later", body: Array(repeating: 1, count: index + round))
                    }
                    for client in clients {
                        let response = try client.readResponse()
                        bodies.append(response.status == 202 ? response.bodyText : "status \(response.status)")
                    }
                }
                return bodies
            }
            let expected = (0..<3).flatMap { round in (0..<64).map { #"{"accepted":\#($0 + round)}"# } }
            #expect(bodies == expected)
            #expect(server.statistics.suspendedRequests == 0)
            #expect(server.statistics.responseDeadlineExpirations == 0)
        }
    }

    @Test func unansweredRequestGetsTheFallbackAtTheDeadline() async throws {
        let held = ResponderBox()
        let completions = CompletionLog()
        var configuration = ServerFixture.configuration(responseDeadline: .seconds(1))
        configuration.onRequestCompleted = { completions.append($0) }
        try await ServerFixture.withServer(configuration, router: held.holdingRouter("/never")) { server in
            let port = server.port
            let response = try await HTTPTestClient.onThread {
                try HTTPTestClient(port: port, readTimeout: .seconds(10)).request("POST", "/never", body: [1])
            }
            #expect(response.status == 503)
            #expect(response.header("Retry-After") != nil)
            #expect(response.header("Cache-Control") == "no-store")
            #expect(response.bodyText.hasPrefix(#"{"error":"unavailable""#))
            #expect(server.statistics.suspendedRequests == 0)
            // The reaper counts an expiration once its fallback won, which can be after the client has read it.
            #expect(await ServerFixture.eventually { server.statistics.responseDeadlineExpirations == 1 })
            // The handler's late answer loses: the fallback was the first answer.
            #expect(held.answerAll(HTTPResponse(status: .ok)) == 0)
            #expect(await ServerFixture.eventually { completions.all.count == 1 })
            #expect(completions.all.first?.outcome == .respondedAfterDeadline)
            #expect(completions.all.first?.status == .serviceUnavailable)
        }
    }

    @Test func stopAcceptingRefusesNewConnectionsWhileSuspendedRequestCompletes() async throws {
        let held = ResponderBox()
        var router = held.holdingRouter()
        router.add(.get, "/healthz") { _, responder in responder.respond(HTTPResponse(status: .ok)) }
        let configuration = ServerFixture.configuration(responseDeadline: .seconds(30))
        try await ServerFixture.withServer(configuration, router: router) { server in
            let port = server.port
            let client = try await HTTPTestClient.onThread { () -> SendableClient in
                let client = try HTTPTestClient(port: port, readTimeout: .seconds(10))
                try client.sendRequest("POST", "/held", body: [1, 2])
                return SendableClient(client)
            }
            #expect(await ServerFixture.eventually { server.statistics.suspendedRequests == 1 })

            server.stopAccepting()
            server.stopAccepting()
            let refused = try await HTTPTestClient.onThread { () -> Bool in
                do {
                    _ = try HTTPTestClient(port: port).request("GET", "/healthz")
                    return false
                } catch {
                    return true
                }
            }
            #expect(refused)
            #expect(server.statistics.inFlightRequests == 1)

            #expect(held.answerAll(.json(status: .accepted, "{}")) == 1)
            let response = try await HTTPTestClient.onThread { try client.client.readResponse() }
            #expect(response.status == 202)
            #expect(response.header("Connection")?.lowercased() == "close")
            #expect(await server.drain(timeout: .seconds(5)))
            server.stop()
            server.stop()
            #expect(server.statistics.suspendedRequests == 0)
        }
    }

    @Test func stopAnswersSuspendedRequestsAndRunReturns() async throws {
        let held = ResponderBox()
        let server = HTTPServer(
            configuration: ServerFixture.configuration(responseDeadline: .seconds(30)), router: held.holdingRouter())
        let running = Task { try await server.run() }
        #expect(await ServerFixture.eventually { server.port != 0 })
        let port = server.port
        _ = try await HTTPTestClient.onThread { () -> SendableClient in
            let client = try HTTPTestClient(port: port)
            try client.sendRequest("POST", "/held", body: [1])
            return SendableClient(client)
        }
        #expect(await ServerFixture.eventually { server.statistics.suspendedRequests == 1 })
        server.stop()
        try await running.value
        #expect(server.statistics.suspendedRequests == 0)
        #expect(held.answerAll(HTTPResponse(status: .ok)) == 0)
    }
}

/// Moves a client between the test and its blocking thread; only one of them uses it at a time.
struct SendableClient: @unchecked Sendable {
    let client: HTTPTestClient
    init(_ client: HTTPTestClient) { self.client = client }
}
