import HTTPServer
import Synchronization
import TestSupport

/// Starts a server on 127.0.0.1 port 0 for one test and stops it afterwards.
struct ServerFixture {
    /// Two threads; with `responseDeadline`, suspended requests get the fallback answer after it.
    static func configuration(responseDeadline: Duration? = nil) -> HTTPServerConfiguration {
        var configuration = HTTPServerConfiguration()
        configuration.threadPoolSize = 2
        if let responseDeadline { configuration.responseDeadline = responseDeadline }
        return configuration
    }

    static func router() -> HTTPRouter {
        var router = HTTPRouter()
        router.add(.get, "/healthz") { _, responder in
            responder.respond(.json(status: .ok, #"{"status":"ok"}"#))
        }
        router.add(.post, "/echo") { request, responder in
            var headers = HTTPHeaders()
            headers.add(name: "X-Body-Length", value: String(request.body.count))
            headers.add(name: "X-Remote", value: request.remoteAddress)
            headers.add(name: "X-Query-Name", value: request.queryValue("name") ?? "")
            headers.add(name: "X-Seen-Header", value: request.headers["x-custom"] ?? "")
            responder.respond(HTTPResponse(status: .ok, headers: headers, body: request.body))
        }
        router.add(.get, "/both") { _, responder in responder.respond(HTTPResponse(status: .ok)) }
        router.add(.post, "/both") { _, responder in responder.respond(HTTPResponse(status: .created)) }
        return router
    }

    static func withServer<Result: Sendable>(
        _ configuration: HTTPServerConfiguration = configuration(),
        router: HTTPRouter = router(),
        _ body: (HTTPServer) async throws -> Result
    ) async throws -> Result {
        let server = HTTPServer(configuration: configuration, router: router)
        try server.start()
        do {
            let result = try await body(server)
            server.stop()
            return result
        } catch {
            server.stop()
            throw error
        }
    }

    /// Polls `condition` until it holds (the suite's hang guard bounds it); the caller asserts on the result.
    static func eventually(_ condition: () -> Bool) async -> Bool {
        await TestSupport.eventually(every: .milliseconds(10), condition)
    }
}

/// Responders a test holds on to, to answer suspended requests when it chooses.
final class ResponderBox: Sendable {
    private let responders = Mutex<[HTTPResponder]>([])

    func add(_ responder: HTTPResponder) {
        responders.withLock { $0.append(responder) }
    }

    var count: Int {
        responders.withLock { $0.count }
    }

    /// A router whose `POST path` suspends every request into this box, to be answered when the test chooses.
    func holdingRouter(_ path: String = "/held") -> HTTPRouter {
        var router = HTTPRouter()
        router.add(.post, path) { _, responder in self.add(responder) }
        return router
    }

    func answerAll(_ response: HTTPResponse) -> Int {
        let all = responders.withLock { $0 }
        return all.filter { $0.respond(response) }.count
    }
}

/// Collects completion reports from libmicrohttpd threads.
final class CompletionLog: Sendable {
    private let entries = Mutex<[HTTPRequestCompletion]>([])

    func append(_ completion: HTTPRequestCompletion) {
        entries.withLock { $0.append(completion) }
    }

    var all: [HTTPRequestCompletion] {
        entries.withLock { $0 }
    }
}
