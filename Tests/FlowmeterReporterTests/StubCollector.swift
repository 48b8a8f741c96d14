import FlowmeterModels
import FlowmeterWire
import Foundation
import Gzip
import HTTPServer
import Synchronization

/// A collector stand-in on 127.0.0.1 for the answers the real one does not give on demand (429, 413, 401, …):
/// a real HTTP server whose answer to each upload the test decides, recording every upload it received.
final class StubCollector: Sendable {
    /// One upload as received: headers, the body after gzip, and the batch decoded by the collector's decoder.
    struct Upload: Sendable {
        var headers: HTTPHeaders
        var body: [UInt8]
        var batch: DiagnosticBatch
        /// The `clientReport` entries, reason → events, read straight from the JSON.
        var discarded: [String: Int]
    }

    private let server: HTTPServer
    private final class UploadLog: Sendable {
        let list = Mutex<[Upload]>([])
    }

    private let uploads = UploadLog()

    /// Starts a server that answers each upload with `answer(upload, index)`, index counting from 0.
    init(answer: @escaping @Sendable (Upload, Int) -> HTTPResponse) throws {
        var router = HTTPRouter()
        let received = uploads
        router.add(.post, "/v1/diagnostics") { request, responder in
            let body =
                request.headers["content-encoding"] == "gzip"
                ? (try? Gzip.inflate(request.body)) ?? [] : request.body
            guard let decoded = try? FastBatchDecoder.decode(body) else {
                responder.respond(HTTPResponse.error(status: .badRequest, code: "invalid_json", message: "stub"))
                return
            }
            let upload = Upload(
                headers: request.headers, body: body, batch: decoded.batch, discarded: Self.discarded(body))
            let index = received.list.withLock { list in
                list.append(upload)
                return list.count - 1
            }
            responder.respond(answer(upload, index))
        }
        server = HTTPServer(configuration: HTTPServerConfiguration(), router: router)
        try server.start()
    }

    /// Starts a server that answers the uploads with `script` in order, then 202 to every further one.
    convenience init(_ script: [HTTPResponse]) throws {
        try self.init { _, index in index < script.count ? script[index] : Self.accepted() }
    }

    deinit { server.stop() }

    /// The base URL to configure a reporter with.
    var endpoint: URL { URL(string: "http://127.0.0.1:\(server.port)")! }

    /// Every upload received so far, in order.
    var received: [Upload] { uploads.list.withLock { $0 } }

    /// Waits (at most 120 s of real time, a hang guard) until `count` uploads have arrived; false if they did not.
    func waitForUploads(_ count: Int) async throws -> Bool {
        let guardDeadline = ContinuousClock.now + .seconds(120)
        while ContinuousClock.now < guardDeadline {
            if received.count >= count { return true }
            try await Task.sleep(for: .milliseconds(1))
        }
        return false
    }

    /// 202 as the collector says it.
    static func accepted(_ count: Int = 1) -> HTTPResponse {
        .json(status: .accepted, #"{"accepted":\#(count),"dropped":0,"diagnostics":[]}"#)
    }

    /// An error answer with `status`, and `Retry-After` when given.
    static func error(_ status: Int, retryAfter: String? = nil) -> HTTPResponse {
        var headers = HTTPHeaders()
        if let retryAfter { headers.add(name: "Retry-After", value: retryAfter) }
        return .error(status: HTTPStatus(status), code: "stub_\(status)", message: "scripted", headers: headers)
    }

    private static func discarded(_ body: [UInt8]) -> [String: Int] {
        let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]
        let entries = ((object?["clientReport"] as? [String: Any])?["discarded"] as? [[String: Any]]) ?? []
        var counts: [String: Int] = [:]
        for entry in entries {
            if let reason = entry["reason"] as? String, let events = entry["events"] as? Int {
                counts[reason, default: 0] += events
            }
        }
        return counts
    }
}
