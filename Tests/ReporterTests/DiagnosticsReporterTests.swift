import FlowmeterModels
import Foundation
import HTTPServer
import Reporter
import Synchronization
import Testing

/// The reporter against a real HTTP server on 127.0.0.1 whose answers the test scripts.
@Suite struct DiagnosticsReporterTests {
    /// A collector stand-in: answers each request with the next scripted response and records what it received.
    final class ScriptedCollector: Sendable {
        let server: HTTPServer
        let received = Mutex<[HTTPRequest]>([])
        let script: Mutex<[HTTPResponse]>

        init(_ responses: [HTTPResponse]) throws {
            script = Mutex(responses)
            var router = HTTPRouter()
            let box = Mutex<ScriptedCollector?>(nil)
            router.add(.post, "/v1/diagnostics") { request, responder in
                guard let collector = box.withLock({ $0 }) else { return }
                collector.received.withLock { $0.append(request) }
                let next = collector.script.withLock { $0.isEmpty ? nil : $0.removeFirst() }
                responder.respond(next ?? HTTPResponse.error(status: .internalServerError, code: "x", message: ""))
            }
            server = HTTPServer(configuration: HTTPServerConfiguration(), router: router)
            box.withLock { $0 = self }
            try server.start()
        }

        var url: URL { URL(string: "http://127.0.0.1:\(server.port)")! }

        func stop() { server.stop() }
    }

    static func batch() -> DiagnosticBatch {
        DiagnosticBatch(
            client: ClientInfo(appID: "com.example.shop", appVersion: "5.2.1", platform: "ios"),
            events: [
                DiagnosticEvent(
                    kind: .unknownType, widgetType: "hologram_projector",
                    occurredAt: Timestamp(secondsSinceEpoch: 1_795_942_800))
            ])
    }

    static let accepted = HTTPResponse.json(status: .accepted, #"{"accepted":1,"dropped":0,"diagnostics":[]}"#)

    @Test func sendsAnAuthorizedJSONBatchAndReadsTheAnswer() async throws {
        let collector = try ScriptedCollector([Self.accepted])
        defer { collector.stop() }
        let reporter = DiagnosticsReporter(baseURL: collector.url, ingestKey: "k-123")
        let answer = try await reporter.send(Self.batch())
        #expect(answer == IngestAnswer(accepted: 1, dropped: 0))
        let request = try #require(collector.received.withLock { $0.first })
        #expect(request.headers["authorization"] == "Bearer k-123")
        #expect(request.headers["content-type"] == "application/json")
        let decoded = try FastBatchDecoder.decode(request.body)
        #expect(decoded.batch.events.count == 1)
        #expect(decoded.batch.client.appID == "com.example.shop")
    }

    @Test func retriesUnavailableWithTheSameBatchID() async throws {
        var unavailable = HTTPResponse.error(status: .serviceUnavailable, code: "unavailable", message: "kafka")
        unavailable.headers.replaceOrAdd(name: "Retry-After", value: "0")
        let collector = try ScriptedCollector([unavailable, unavailable, Self.accepted])
        defer { collector.stop() }
        let reporter = DiagnosticsReporter(baseURL: collector.url, ingestKey: "k")
        let answer = try await reporter.send(Self.batch(), attempts: 5, initialBackoff: 0.01)
        #expect(answer.accepted == 1)
        let ids = try collector.received.withLock { requests in
            try requests.map { try FastBatchDecoder.decode($0.body).batch.id }
        }
        #expect(ids.count == 3)
        #expect(Set(ids).count == 1)
        #expect(ids[0] != nil)
    }

    @Test(arguments: [
        (400, "invalid_json"), (401, "unauthorized"), (413, "too_large"), (415, "unsupported_media_type"),
    ])
    func doesNotRetryWhatTheContractSaysNotTo(status: Int, code: String) async throws {
        let collector = try ScriptedCollector([
            HTTPResponse.error(status: HTTPStatus(status), code: code, message: "no"), Self.accepted,
        ])
        defer { collector.stop() }
        let reporter = DiagnosticsReporter(baseURL: collector.url, ingestKey: "k")
        let error = await #expect(throws: ReporterError.self) {
            _ = try await reporter.send(Self.batch(), attempts: 3, initialBackoff: 0.01)
        }
        #expect(error?.status == status)
        #expect(error?.code == code)
        #expect(error?.isRetriable == false)
        #expect(collector.received.withLock { $0.count } == 1)
    }

    @Test func gzipBodiesAreMarked() async throws {
        let collector = try ScriptedCollector([Self.accepted])
        defer { collector.stop() }
        // Any transformation proves the hook; the collector-side inflate is tested in CollectorTests.
        let reporter = DiagnosticsReporter(baseURL: collector.url, ingestKey: "k", gzip: { Array($0.reversed()) })
        _ = try await reporter.send(Self.batch())
        let request = try #require(collector.received.withLock { $0.first })
        #expect(request.headers["content-encoding"] == "gzip")
        #expect(request.body.first == UInt8(ascii: "}"))
    }

    @Test func refusedConnectionIsRetriable() async throws {
        let reporter = DiagnosticsReporter(baseURL: URL(string: "http://127.0.0.1:1")!, ingestKey: "k", timeout: 2)
        let error = await #expect(throws: ReporterError.self) { _ = try await reporter.send(Self.batch()) }
        #expect(error?.status == nil)
        #expect(error?.isRetriable == true)
    }
}
