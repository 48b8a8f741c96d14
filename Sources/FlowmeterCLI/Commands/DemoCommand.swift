import Collector
import FlowmeterModels
import Foundation
import Gzip
import Kafka
import Reporter

/// `flowmeter demo`: the pipeline end to end on the embedded default, for `make demo`.
///
/// It starts the collector with Kafka in process, posts the Flow-UI resilience example and a few hundred realistic
/// batches over HTTP (plain and gzip, one with broken events, one with a wrong key), reads `flowmeter.events.v1`
/// back, and prints what arrived.
enum DemoCommand {
    static var command: Command {
        Command(
            name: "demo",
            abstract: "Run the pipeline end to end on the embedded default and print what it found.",
            discussion: """
                Starts `flowmeter serve --kafka embedded` in this process (librdkafka's mock cluster), posts traffic
                over HTTP on 127.0.0.1 like apps do, then reads the events topic back. Nothing to start by hand.
                """,
            options: [
                .value("batches", "N", help: "Realistic 50-event batches to post.", default: "300"),
                .value(
                    "fixtures", "DIR", help: "Where the resilience example fixture lives.",
                    default: "Tests/FlowmeterModelsTests/Fixtures"),
            ],
            run: { arguments in
                let batches = try arguments.parsed("batches", as: "a positive number") { Int($0).flatMap { $0 > 0 ? $0 : nil } } ?? 300
                return try await DemoRun(batchCount: batches, fixtures: arguments.value("fixtures") ?? "").run()
            }
        )
    }
}

/// One run of the demo.
struct DemoRun {
    let batchCount: Int
    let fixtures: String
    let ingestKey = "demo-ingest-key"

    func run() async throws -> Int32 {
        print(Terminal.styled("Flowmeter demo", .bold) + ": Flow-UI decode diagnostics, from apps to Kafka\n")

        Terminal.heading("starting the collector (Kafka in process)")
        let logURL = FileManager.default.temporaryDirectory.appendingPathComponent("flowmeter-demo-\(getpid()).log")
        _ = FileManager.default.createFile(atPath: logURL.path, contents: nil)
        let logHandle = try FileHandle(forWritingTo: logURL)
        var configuration = CollectorConfiguration(
            keys: try IngestKeys(
                json: Data(
                    """
                    {"ingestKeys": [{"key": "\(ingestKey)", "apps": ["com.example.shop", "com.example.reader"],
                      "rateLimit": {"eventsPerSecond": 1000000, "burst": 1000000}}],
                     "adminKeys": ["demo-admin-key"]}
                    """.utf8)))
        configuration.port = 0
        configuration.kafka = .embedded
        configuration.salt = Array("demo-salt-not-for-production".utf8)
        configuration.collectorID = "demo"
        let collector = try makeCollector(
            configuration: configuration,
            logger: CollectorLogger(threshold: .info, format: .json) { line in
                logHandle.write(Data((line + "\n").utf8))
            })
        try collector.start()
        let baseURL = URL(string: "http://127.0.0.1:\(collector.port)")!
        print("    collector  \(baseURL.absoluteString)  (POST /v1/diagnostics, GET /metrics)")
        print("    kafka      librdkafka mock cluster at \(collector.bootstrapServers.joined(separator: ","))")
        print("    log        \(logURL.path)\n")

        let reporter = DiagnosticsReporter(baseURL: baseURL, ingestKey: ingestKey)
        let gzipReporter = DiagnosticsReporter(baseURL: baseURL, ingestKey: ingestKey, gzip: { Gzip.compress($0) })

        Terminal.heading("an app reports the Flow-UI resilience example")
        let resiliencePath = fixtures + "/resilience-example.json"
        if let body = FileManager.default.contents(atPath: resiliencePath) {
            let answer = try await reporter.send(body: Array(body))
            print("    a page of five widgets: two healthy, one unknown type, one malformed payload, one without a type")
            print("    202 accepted \(answer.accepted), dropped \(answer.dropped)\n")
        } else {
            print("    (skipped: \(resiliencePath) not found; run from the repository root)\n")
        }

        Terminal.heading("one batch with three broken events: the rest still count")
        let broken = Array(
            """
            {"client": {"appID": "com.example.shop", "appVersion": "5.3.0", "platform": "ios"},
             "events": [
               {"kind": "unknownType", "widgetType": "hologram_projector", "occurredAt": "\(Timestamp(Date()).rfc3339String)"},
               {"widgetType": "promo_banner", "occurredAt": "\(Timestamp(Date()).rfc3339String)"},
               {"kind": 7, "occurredAt": "\(Timestamp(Date()).rfc3339String)"},
               {"kind": "malformedPayload", "widgetType": "video_tile", "occurredAt": "yesterday"},
               {"kind": "duplicateID", "widgetType": "carousel_v2", "occurredAt": "\(Timestamp(Date()).rfc3339String)"}
             ]}
            """.utf8)
        let partial = try await reporter.send(body: broken)
        print("    202 accepted \(partial.accepted), dropped \(partial.dropped)")
        for diagnostic in partial.diagnostics {
            print("      " + Terminal.styled(diagnostic.description, .yellow))
        }
        print("")

        Terminal.heading("a key the collector does not know")
        do {
            _ = try await DiagnosticsReporter(baseURL: baseURL, ingestKey: "not-a-key").send(body: broken)
        } catch {
            print("    \(error.status.map(String.init) ?? "-") \(error.code): \(error.message)\n")
        }

        Terminal.heading("\(batchCount) realistic batches of 50 events from two apps (half of them gzip)")
        let bodies = SyntheticBatches.batches(count: batchCount, seed: 2026)
        var accepted = 0
        var dropped = 0
        for (index, body) in bodies.enumerated() {
            let answer = try await (index.isMultiple(of: 2) ? gzipReporter : reporter).send(body: body)
            accepted += answer.accepted
            dropped += answer.dropped
            if index.isMultiple(of: 10) || index == bodies.count - 1 {
                Terminal.progress("posting", done: index + 1, of: bodies.count)
            }
        }
        print("    202 for every batch: \(accepted) events accepted, \(dropped) dropped\n")

        Terminal.heading("reading flowmeter.events.v1 back")
        let expected = accepted + partial.accepted + 3
        let records = try await consumeEvents(bootstrap: collector.bootstrapServers, expecting: expected)
        print("    \(records.count) of \(expected) acknowledged events are in the topic (202 was sent after delivery)")
        if let sample = records.first(where: { $0.widgetType == "hologram_projector" }) ?? records.first {
            print("    one record, as a consumer sees it (installHash, never the raw install id):")
            let json = try JSONEncoder.pretty.encode(sample)
            for line in String(decoding: json, as: UTF8.self).split(separator: "\n") {
                print("      " + Terminal.styled(String(line), .dim))
            }
        }
        print("")
        printTopTypes(records)

        await collector.shutdown()
        print("\nThe collector stopped cleanly. Next: `flowmeter serve --help`, and the README.")
        return 0
    }

    private func consumeEvents(bootstrap: [String], expecting count: Int) async throws -> [EventRecord] {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                do {
                    let consumer = try KafkaConsumer(
                        configuration: KafkaConsumerConfiguration(
                            bootstrapServers: bootstrap, groupID: "flowmeter-demo-\(getpid())"))
                    try consumer.subscribe(topics: ["flowmeter.events.v1"])
                    var records: [EventRecord] = []
                    let decoder = JSONDecoder()
                    let deadline = Date().addingTimeInterval(30)
                    while records.count < count && Date() < deadline {
                        for message in try consumer.poll(maxMessages: 5_000, timeout: .milliseconds(200)) {
                            if let record = try? decoder.decode(EventRecord.self, from: Data(message.value)) {
                                records.append(record)
                            }
                        }
                    }
                    consumer.close()
                    continuation.resume(returning: records)
                } catch {
                    continuation.resume(throwing: error)
                }
            }
            thread.name = "demo-consumer"
            thread.start()
        }
    }

    private func printTopTypes(_ records: [EventRecord]) {
        Terminal.heading("diagnostics by kind and widget type, from the topic (release builds)")
        var counts: [String: [String: Int]] = [:]
        for record in records where record.buildConfiguration == .release {
            counts[record.kind.rawValue, default: [:]][record.widgetType ?? "(none)", default: 0] += record.count
        }
        for (kind, types) in counts.sorted(by: { $0.value.values.reduce(0, +) > $1.value.values.reduce(0, +) }) {
            let top = types.sorted { $0.value > $1.value }.prefix(4)
                .map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            print("    " + kind.padding(toLength: 20, withPad: " ", startingAt: 0) + top)
        }
    }
}

extension JSONEncoder {
    fileprivate static var pretty: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return encoder
    }
}
