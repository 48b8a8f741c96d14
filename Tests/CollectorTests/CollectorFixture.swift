import Collector
import Foundation
import Kafka
import Logging
import Synchronization
import TestSupport

/// A collector on 127.0.0.1 port 0 for one test, with captured logs, and helpers to post batches to it.
final class CollectorFixture: Sendable {
    static let shopKey = "key-shop-0123456789"
    static let otherKey = "key-other-0123456789"
    static let shopApp = "com.example.shop"
    static let otherApp = "com.example.other"

    let collector: Collector
    let kafka: KafkaFixture?
    private let logLines = LogBuffer()

    /// Starts a collector; with `kafka`, it publishes there, otherwise it runs in `--kafka none` mode; with `store`,
    /// deploy markers and manifests are recorded there.
    init(
        kafka: KafkaFixture? = nil, store: (any CollectorStore)? = nil,
        _ configure: (inout CollectorConfiguration) -> Void = { _ in }
    ) throws {
        let configuration = try Self.configuration(kafka: kafka, configure)
        self.kafka = kafka
        let lines = logLines
        let logger = Logger(threshold: .debug) { line in lines.append(line) }
        collector = try makeCollector(configuration: configuration, logger: logger, store: store)
        try collector.start()
    }

    /// The configuration every test collector starts from (the fixture's keys and salt, port 0, two workers,
    /// generous deadlines), changed by `configure`: for a test that makes the collector itself (to watch it be
    /// freed, or to see it refused).
    static func configuration(
        kafka: KafkaFixture? = nil, _ configure: (inout CollectorConfiguration) -> Void = { _ in }
    ) throws -> CollectorConfiguration {
        let keysJSON = """
            {"ingestKeys": [{"key": "\(Self.shopKey)", "apps": ["\(Self.shopApp)"]},
                            {"key": "\(Self.otherKey)", "apps": ["\(Self.otherApp)"]}]}
            """
        var configuration = CollectorConfiguration(keys: try IngestKeys(json: Data(keysJSON.utf8)))
        configuration.port = 0
        configuration.threads = 2
        configuration.salt = Array("test-salt-0123456789abcdef".utf8)
        configuration.collectorID = "test-collector"
        configuration.kafka = kafka.map { .brokers($0.bootstrapServers) } ?? .none
        // Deadlines well past what a delivery or a request takes on a loaded machine: a test about a deadline sets
        // its own; the rest must not see a 503 because both cores are busy.
        configuration.responseDeadline = .seconds(8)
        configuration.requestDeadline = .seconds(15)
        configuration.shutdownFlushTimeout = .seconds(5)
        configure(&configuration)
        return configuration
    }

    var port: UInt16 { collector.port }
    var logs: [String] { logLines.lines }

    func shutdown() async {
        await collector.shutdown()
    }

    /// Posts `body` to `/v1/diagnostics` on a fresh connection and reads the answer.
    func post(
        _ body: [UInt8], key: String? = shopKey, contentType: String? = "application/json",
        encoding: String? = nil, path: String = "/v1/diagnostics"
    ) async throws -> HTTPTestResponse {
        var headers: [(String, String)] = []
        if let key { headers.append(("Authorization", "Bearer \(key)")) }
        if let contentType { headers.append(("Content-Type", contentType)) }
        if let encoding { headers.append(("Content-Encoding", encoding)) }
        let port = port
        let sendHeaders = headers
        return try await HTTPTestClient.onThread {
            let client = try HTTPTestClient(port: port, readTimeout: .seconds(30))
            defer { client.close() }
            return try client.request("POST", path, headers: sendHeaders, body: body)
        }
    }

    /// Posts fresh two-event batches (`<prefix>-<attempt>`) until one gets 202, as a client retrying after 503
    /// would: the wait for a producer that reconnects or was rebuilt, bounded only by the suite's hang guard. Returns
    /// the acknowledged event ids (empty when no batch was taken) and every status seen before the 202.
    func postUntilAccepted(prefix: String) async throws -> (acknowledged: Set<String>, refusals: [Int]) {
        var refusals: [Int] = []
        var acknowledged: Set<String> = []
        _ = try await eventually(every: .milliseconds(250)) {
            let id = "\(prefix)-\(refusals.count)"
            let response = try await post(Batches.good(events: 2, id: id))
            guard response.status == 202 else {
                refusals.append(response.status)
                return false
            }
            acknowledged = ["\(id)-0", "\(id)-1"]
            return true
        }
        return (acknowledged, refusals)
    }

    /// GETs `path` and reads the answer.
    func get(_ path: String, method: String = "GET") async throws -> HTTPTestResponse {
        let port = port
        return try await HTTPTestClient.onThread {
            let client = try HTTPTestClient(port: port, readTimeout: .seconds(30))
            defer { client.close() }
            return try client.request(method, path)
        }
    }

    /// The value of an unlabelled or labelled sample in `/metrics`, or nil.
    func metric(_ series: String) async throws -> Double? {
        let text = try await get("/metrics").bodyText
        for line in text.split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.dropFirst(series.count + 1))
        }
        return nil
    }
}

/// Batch bodies for tests.
enum Batches {
    static func now(offset seconds: Double = 0) -> String {
        Date().addingTimeInterval(seconds).formatted(.iso8601)
    }

    static func event(kind: String = "unknownType", widgetType: String? = "hologram_projector", id: String? = nil)
        -> String
    {
        var fields = [#""kind":"\#(kind)""#, #""occurredAt":"\#(now(offset: -2))""#]
        if let widgetType { fields.append(#""widgetType":"\#(widgetType)""#) }
        if let id { fields.append(#""id":"\#(id)""#) }
        return "{" + fields.joined(separator: ",") + "}"
    }

    static func batch(
        id: String? = UUID().uuidString, appID: String = CollectorFixture.shopApp,
        installID: String = "INSTALL-\(UUID().uuidString)", events: [String]
    ) -> [UInt8] {
        var text = "{"
        if let id { text += #""id":"\#(id)","# }
        text += #""sentAt":"\#(now())","client":{"appID":"\#(appID)","appVersion":"5.2.1","platform":"ios","#
        text += #""installID":"\#(installID)"},"decodes":10,"events":["# + events.joined(separator: ",") + "]}"
        return Array(text.utf8)
    }

    static func good(events count: Int = 3, id: String? = UUID().uuidString, installID: String = "INSTALL-GOOD")
        -> [UInt8]
    {
        batch(id: id, installID: installID, events: (0..<count).map { event(id: "\(id ?? "e")-\($0)") })
    }
}

extension HTTPTestResponse {
    /// The body as a JSON object.
    var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:]
    }
}

/// Log lines captured from a collector.
final class LogBuffer: Sendable {
    private let state = Mutex<[String]>([])

    func append(_ line: String) {
        state.withLock { $0.append(line) }
    }

    var lines: [String] { state.withLock { $0 } }
}
