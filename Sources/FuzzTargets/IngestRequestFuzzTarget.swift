import Collector
import FlowmeterModels
import FlowmeterWire
import Foundation
import Gzip
import HTTPServer
import Logging
import Rollups
import Synchronization

/// The collector's request path in process: a request built from the input goes through the collector's router (the
/// same routes and handlers `serve` runs: ingest, deploys, health, metrics) with `--kafka none` and an in-memory
/// store, without sockets.
///
/// The input is a request in HTTP/1.1's shape: a request line (`POST /v1/diagnostics?query`), header lines
/// (`Name: value`), an empty line, then the body bytes. Header names and values are cut at a NUL and read as UTF-8
/// with repair, as libmicrohttpd hands them over. The pseudo-header `X-Fuzz-Gzip` makes the harness gzip the body
/// and send it with `Content-Encoding: gzip`, so mutations of a readable body reach the decoder through the
/// inflater. Keys: `fuzz-ingest-key` may write `com.example.shop` and `com.example.news`; `fuzz-admin-key` records
/// deploys.
///
/// Invariants:
/// - No crash, and exactly one answer: before the handler returns (nothing waits, with no Kafka), or for deploys
///   and manifests once the admin write queue has stored the write.
/// - Every answer is 2xx or 4xx, never 5xx (nothing here can be unavailable); every answer but `/metrics` is
///   `application/json` with a JSON object body; every 4xx has string `error` and `message` members; a 202 has a
///   non-negative `accepted` count.
/// - The answer agrees with the decoder: a well-formed ingest request (the ingest key, `application/json`, no
///   encoding) whose body ``FastBatchDecoder`` accepts, within the event limit and for an allowed app, gets 202;
///   one whose body it rejects gets 400 or 413.
/// - Every log line the collector writes is one line of JSON (no injected newlines or broken escapes).
package enum IngestRequestFuzzTarget: FuzzTarget {
    package static let name = "ingest-request"

    static let ingestKey = "fuzz-ingest-key"
    static let adminKey = "fuzz-admin-key"
    static let apps: Set<String> = ["com.example.shop", "com.example.news"]
    static let maxEventsPerBatch = 1_000
    /// Requests one collector answers before a fresh one replaces it, which bounds what it remembers (batch ids,
    /// deploy markers).
    static let requestsPerCollector = 20_000

    private struct Harness: Sendable {
        var collector: Collector
        var requests: Int
    }

    private static let harness = Mutex<Harness?>(nil)
    private static let logProblems = Mutex<[String]>([])

    package static func check(_ input: [UInt8]) throws(FuzzFailure) {
        let collector = try currentCollector()
        let request = makeRequest(input)
        let answers = Mutex<[HTTPResponse]>([])
        let answered = DispatchSemaphore(value: 0)
        collector.router.handle(
            request,
            responder: HTTPResponder { response in
                answers.withLock { $0.append(response) }
                answered.signal()
            })
        // Deploys and manifests answer from the admin write queue's thread once the store has the write; the rest
        // before the handler returns. The bound only turns a lost answer into a failure instead of a hang.
        _ = answered.wait(timeout: .now() + .seconds(10))
        let given = answers.withLock { $0 }
        try require(given.count == 1, "\(given.count) answers to \(describe(request))")
        try checkAnswer(given[0], to: request)
        let problems = logProblems.withLock { problems in
            defer { problems.removeAll() }
            return problems
        }
        try require(problems.isEmpty, "bad log lines for \(describe(request)): \(problems)")
    }

    // MARK: - The request

    static func makeRequest(_ input: [UInt8]) -> HTTPRequest {
        let (head, body) = split(input)
        var lines = head.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { line in
            line.last == UInt8(ascii: "\r") ? line.dropLast() : line
        }
        let requestLine = lines.isEmpty ? [] : lines.removeFirst()
        let parts = requestLine.split(separator: UInt8(ascii: " "), maxSplits: 2, omittingEmptySubsequences: true)
        let method = parts.first.map(cString) ?? ""
        let target = parts.count > 1 ? parts[1] : []
        let question = target.firstIndex(of: UInt8(ascii: "?"))
        let path = cString(target[..<(question ?? target.endIndex)])
        var queryItems: [(name: String, value: String?)] = []
        if let question {
            for item in target[(question + 1)...].split(separator: UInt8(ascii: "&")) {
                if let equals = item.firstIndex(of: UInt8(ascii: "=")) {
                    queryItems.append((cString(item[..<equals]), cString(item[(equals + 1)...])))
                } else {
                    queryItems.append((cString(item), nil))
                }
            }
        }
        var headers = HTTPHeaders()
        var gzipBody = false
        for line in lines {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { continue }
            let name = cString(line[..<colon])
            let value = cString(line[(colon + 1)...].drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") })
            if name.lowercased() == "x-fuzz-gzip" {
                gzipBody = true
            } else {
                headers.add(name: name, value: value)
            }
        }
        var bytes = Array(body)
        if gzipBody {
            bytes = Gzip.compress(bytes)
            headers.replaceOrAdd(name: "Content-Encoding", value: "gzip")
        }
        return HTTPRequest(
            method: HTTPMethod(rawValue: method), path: path, queryItems: queryItems, headers: headers, body: bytes,
            remoteAddress: "127.0.0.1:40000")
    }

    /// The head (before the first empty line) and the body (after it).
    private static func split(_ input: [UInt8]) -> (head: ArraySlice<UInt8>, body: ArraySlice<UInt8>) {
        var index = input.startIndex
        while index < input.endIndex {
            if input[index] == UInt8(ascii: "\n") {
                let next = index + 1
                if next < input.endIndex, input[next] == UInt8(ascii: "\n") {
                    return (input[..<index], input[(next + 1)...])
                }
                if next + 1 < input.endIndex, input[next] == UInt8(ascii: "\r"), input[next + 1] == UInt8(ascii: "\n") {
                    return (input[..<index], input[(next + 2)...])
                }
            }
            index += 1
        }
        return (input[...], [])
    }

    /// The bytes up to the first NUL, as UTF-8 with repair: what `String(cString:)` makes of a C string.
    private static func cString(_ bytes: ArraySlice<UInt8>) -> String {
        String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
    }

    private static func describe(_ request: HTTPRequest) -> String {
        "\(request.method) \(request.path.debugDescription) with \(request.headers.count) headers and "
            + "\(request.body.count) body bytes"
    }

    // MARK: - The answer

    private static func checkAnswer(_ response: HTTPResponse, to request: HTTPRequest) throws(FuzzFailure) {
        let status = response.status.rawValue
        let what = "\(status) to \(describe(request))"
        try require((200..<300).contains(status) || (400..<500).contains(status), "answered \(what)")
        if request.path == "/metrics" && status == 200 { return }
        try require(response.headers["Content-Type"] == "application/json", "no JSON content type on \(what)")
        let object = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any]
        guard let object else { throw FuzzFailure("the body of \(what) is not a JSON object: \(show(response.body))") }
        if status >= 400 {
            try require(
                object["error"] is String && object["message"] is String,
                "the body of \(what) lacks error and message: \(show(response.body))")
        }
        if status == 202 {
            try require(
                (object["accepted"] as? Int).map { $0 >= 0 } ?? false,
                "the body of \(what) has no accepted count: \(show(response.body))")
        }
        if let expected = expectedStatuses(for: request) {
            try require(expected.contains(status), "answered \(what); the decoder says \(expected)")
        }
    }

    /// What the decoder says a plain, well-formed ingest request must get, or nil for any other request.
    private static func expectedStatuses(for request: HTTPRequest) -> Set<Int>? {
        guard request.method == .post, request.path == "/v1/diagnostics", request.headers.count == 2,
            request.headers["Authorization"] == "Bearer \(ingestKey)",
            request.headers["Content-Type"] == "application/json"
        else { return nil }
        do throws(BatchDecodingError) {
            let decoded = try FastBatchDecoder.decode(request.body)
            guard decoded.batch.events.count + decoded.dropped.count <= maxEventsPerBatch else { return [413] }
            return apps.contains(decoded.batch.client.appID) ? [202] : [403]
        } catch {
            return [400, 413]
        }
    }

    // MARK: - The collector

    private static func currentCollector() throws(FuzzFailure) -> Collector {
        let result = harness.withLock { harness -> Result<Collector, FuzzFailure> in
            if var current = harness, current.requests < requestsPerCollector {
                current.requests += 1
                harness = current
                return .success(current.collector)
            }
            do throws(FuzzFailure) {
                let collector = try freshCollector()
                harness = Harness(collector: collector, requests: 1)
                return .success(collector)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    private static func freshCollector() throws(FuzzFailure) -> Collector {
        let keysJSON = """
            {"ingestKeys": [{"key": "\(ingestKey)", "apps": ["com.example.shop", "com.example.news"],
              "rateLimit": {"eventsPerSecond": 1e12, "burst": 1e12}}],
             "adminKeys": ["\(adminKey)"]}
            """
        let keys: IngestKeys
        do throws(IngestKeys.FileError) {
            keys = try IngestKeys(json: Data(keysJSON.utf8))
        } catch {
            throw FuzzFailure("the harness keys do not parse: \(error)")
        }
        var configuration = CollectorConfiguration(keys: keys)
        configuration.kafka = .none
        configuration.port = 0
        configuration.salt = Array("fuzz-salt-0123456789".utf8)
        configuration.collectorID = "fuzz"
        configuration.maxEventsPerBatch = maxEventsPerBatch
        configuration.defaultRateLimit = TokenBucket.Limit(perSecond: 1e12, burst: 1e12)
        let logger = Logger(threshold: .debug, format: .json) { line in
            if let problem = logLineProblem(line) { logProblems.withLock { $0.append(problem) } }
        }
        do throws(CollectorError) {
            return try makeCollector(configuration: configuration, logger: logger, store: FuzzStore())
        } catch {
            throw FuzzFailure("the harness collector cannot be made: \(error)")
        }
    }

    /// Why `line` is not one line of JSON, or nil when it is.
    private static func logLineProblem(_ line: String) -> String? {
        guard !line.contains(where: { $0 == "\n" || $0 == "\r" }) else {
            return "a newline inside \(line.debugDescription)"
        }
        guard (try? JSONSerialization.jsonObject(with: Data(line.utf8))) is [String: Any] else {
            return "not a JSON object: \(line.debugDescription)"
        }
        return nil
    }
}

/// The collector's store in the fuzz harness: the in-memory reference store.
private struct FuzzStore: CollectorStore {
    let store = InMemoryRollupStore()

    func apply(_ partials: [PartialRollup]) throws -> RollupApplyResult { try store.apply(partials) }
    func recordDeploy(_ deploy: DeployMarker) throws { try store.recordDeploy(deploy) }
    func recordWatermarks(_ watermarks: [CollectorWatermark]) throws { try store.recordWatermarks(watermarks) }
    func recordManifest(_ manifest: CapabilityManifest) throws { try store.recordManifest(manifest) }
}
