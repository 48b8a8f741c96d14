import HTTPServer
import Synchronization
import Testing

@Suite struct HTTPRouterTests {
    private func answer(_ router: HTTPRouter, _ method: HTTPMethod, _ path: String) -> HTTPResponse? {
        let box = Mutex<HTTPResponse?>(nil)
        router.handle(
            HTTPRequest(method: method, path: path),
            responder: HTTPResponder { response in box.withLock { $0 = response } }
        )
        return box.withLock { $0 }
    }

    private func router() -> HTTPRouter {
        var router = HTTPRouter()
        router.add(.get, "/metrics") { _, responder in responder.respond(HTTPResponse(status: .ok)) }
        router.add(.post, "/metrics") { _, responder in responder.respond(HTTPResponse(status: .accepted)) }
        return router
    }

    @Test func exactMatchDispatchesByMethod() {
        #expect(answer(router(), .get, "/metrics")?.status == .ok)
        #expect(answer(router(), .post, "/metrics")?.status == .accepted)
    }

    @Test(arguments: ["/nope", "/metrics/", "/METRICS", "/metrics/x", ""])
    func unknownPathIsNotFoundJSON(path: String) throws {
        let response = try #require(answer(router(), .get, path))
        #expect(response.status == .notFound)
        #expect(response.headers["content-type"] == "application/json")
        #expect(String(decoding: response.body, as: UTF8.self).hasPrefix(#"{"error":"not_found","message":"#))
    }

    @Test(arguments: [HTTPMethod.put, .delete, .trace, .head, HTTPMethod(rawValue: "BREW")])
    func wrongMethodIsMethodNotAllowedWithAllow(method: HTTPMethod) throws {
        let response = try #require(answer(router(), method, "/metrics"))
        #expect(response.status == .methodNotAllowed)
        #expect(response.headers["Allow"] == "GET, POST")
        #expect(String(decoding: response.body, as: UTF8.self).contains(#""error":"method_not_allowed""#))
    }

    @Test func firstAnswerWins() {
        let received = Mutex<[HTTPStatus]>([])
        let responder = HTTPResponder { response in received.withLock { $0.append(response.status) } }
        #expect(responder.respond(HTTPResponse(status: .ok)))
        #expect(!responder.respond(HTTPResponse(status: .serviceUnavailable)))
        #expect(responder.isAnswered)
        #expect(received.withLock { $0 } == [.ok])
    }

    @Test func errorBodiesEscapeJSON() {
        let response = HTTPResponse.error(status: .badRequest, code: "invalid_json", message: "bad \"x\"\n\u{1}")
        #expect(
            String(decoding: response.body, as: UTF8.self)
                == #"{"error":"invalid_json","message":"bad \"x\"\n\u0001"}"#
        )
    }
}
