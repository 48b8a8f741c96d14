import HTTPServer
import TestSupport
import Testing

@Suite struct HTTPServerRoutingTests {
    @Test func routesKnownUnknownAndWrongMethod() async throws {
        try await ServerFixture.withServer { server in
            let port = server.port
            let (ok, missing, wrong, both) = try await HTTPTestClient.onThread {
                let client = try HTTPTestClient(port: port)
                return (
                    try client.request("GET", "/healthz"),
                    try client.request("GET", "/missing"),
                    try client.request("DELETE", "/healthz"),
                    try client.request("POST", "/both", body: [])
                )
            }
            #expect(ok.status == 200)
            #expect(ok.bodyText == #"{"status":"ok"}"#)
            #expect(missing.status == 404)
            #expect(missing.bodyText.hasPrefix(#"{"error":"not_found""#))
            #expect(wrong.status == 405)
            #expect(wrong.header("Allow") == "GET")
            #expect(wrong.bodyText.hasPrefix(#"{"error":"method_not_allowed""#))
            #expect(both.status == 201)
        }
    }

    @Test(arguments: [("GET", "/healthz"), ("GET", "/nowhere"), ("PUT", "/healthz"), ("POST", "/echo")])
    func everyResponseCarriesSafetyHeaders(method: String, path: String) async throws {
        try await ServerFixture.withServer { server in
            let port = server.port
            let response = try await HTTPTestClient.onThread {
                try HTTPTestClient(port: port).request(method, path, body: method == "POST" ? [1, 2, 3] : nil)
            }
            #expect(response.header("Cache-Control") == "no-store")
            #expect(response.header("X-Content-Type-Options") == "nosniff")
        }
    }

    @Test func handlerSeesBodyQueryHeadersAndRemoteAddress() async throws {
        try await ServerFixture.withServer { server in
            let port = server.port
            let body = (0..<12_000).map { UInt8(truncatingIfNeeded: $0) }
            let response = try await HTTPTestClient.onThread {
                try HTTPTestClient(port: port).request(
                    "POST",
                    "/echo?name=caf%C3%A9&flag",
                    headers: [("X-CUSTOM", "seen")],
                    body: body
                )
            }
            #expect(response.status == 200)
            #expect(response.body == body)
            #expect(response.header("X-Query-Name") == "café")
            #expect(response.header("X-Seen-Header") == "seen")
            #expect(response.header("X-Remote")?.hasPrefix("127.0.0.1:") == true)
        }
    }

    @Test func chunkedBodyWithinLimitReachesHandler() async throws {
        try await ServerFixture.withServer { server in
            let port = server.port
            let response = try await HTTPTestClient.onThread {
                let client = try HTTPTestClient(port: port)
                try client.sendChunkedRequest("POST", "/echo", chunks: [Array("hello ".utf8), Array("world".utf8)])
                return try client.readResponse()
            }
            #expect(response.status == 200)
            #expect(response.bodyText == "hello world")
        }
    }

    @Test func manyConcurrentKeepAliveConnectionsAllSucceed() async throws {
        var configuration = ServerFixture.configuration()
        configuration.threadPoolSize = 4
        try await ServerFixture.withServer(configuration) { server in
            let port = server.port
            let statuses = try await HTTPTestClient.onThread { () -> [Int] in
                let clients = try (0..<128).map { _ in try HTTPTestClient(port: port) }
                var statuses: [Int] = []
                for _ in 0..<5 {
                    for client in clients {
                        try client.sendRequest("POST", "/echo", body: Array(repeating: 7, count: 512))
                    }
                    for client in clients {
                        statuses.append(try client.readResponse().status)
                    }
                }
                return statuses
            }
            #expect(statuses.count == 640)
            #expect(statuses.allSatisfy { $0 == 200 })
            #expect(server.statistics.completedRequests >= 640)
        }
    }

    @Test func startFailsClearlyWhenPortIsTaken() async throws {
        try await ServerFixture.withServer { server in
            var configuration = ServerFixture.configuration()
            configuration.port = server.port
            let second = HTTPServer(configuration: configuration, router: ServerFixture.router())
            let error = #expect(throws: HTTPServerError.self) { try second.start() }
            #expect(error?.code == .addressInUse)
            #expect(error?.isRetriable == true)
        }
    }

    @Test func completionHookReportsRouteStatusAndOutcome() async throws {
        let completions = CompletionLog()
        var configuration = ServerFixture.configuration()
        configuration.onRequestCompleted = { completions.append($0) }
        try await ServerFixture.withServer(configuration) { server in
            let port = server.port
            _ = try await HTTPTestClient.onThread {
                let client = try HTTPTestClient(port: port)
                _ = try client.request("GET", "/healthz")
                _ = try client.request("GET", "/missing")
            }
            #expect(await ServerFixture.eventually { completions.all.count == 2 })
            let all = completions.all
            #expect(all.map(\.route) == ["/healthz", nil])
            #expect(all.map(\.status) == [.ok, .notFound])
            #expect(all.allSatisfy { $0.outcome == .responded })
        }
    }
}
