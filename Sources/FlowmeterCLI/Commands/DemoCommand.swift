import Collector
import FlowmeterModels
import FlowmeterReporter
import FlowmeterRuntime
import Foundation
import Lifecycle
import Logging
import RollupStore
import Rollups
import Sink

/// `flowmeter demo`: the product's point in about a minute, for `make demo`.
///
/// It starts the collector with Kafka, the rollup sink and a temporary SQLite store in this process, shows that a
/// broken batch still counts, simulates a few hours of three apps' traffic (with a backend deploy that ships an
/// ungated type, one with a typo and one with a malformed payload), then prints what `ungated` and `spikes` find
/// and writes the weekly report.
enum DemoCommand {
    static var command: Command {
        Command(
            name: "demo",
            abstract: "Run the pipeline end to end on a simulated fleet and show what it finds.",
            discussion: """
                Starts `flowmeter serve --kafka embedded --store <temporary SQLite>` in this process, writes
                --history-days of the fleet's past to the batches topic as batch records (for the sink to build like
                any others, so `flowmeter gates` has weeks to forecast from), posts traffic over HTTP on 127.0.0.1
                like apps do (see `flowmeter simulate --help`), then runs `flowmeter ungated`, `flowmeter spikes` and
                `flowmeter gates` over the store and writes the weekly report. Nothing to start by hand; the store
                and the report stay in --output for the query commands to read afterwards.
                """,
            options: [
                .value("duration", "DURATION", help: "Wall time of the simulation.", default: "50s"),
                .value("simulated-hours", "HOURS", help: "Hours of traffic simulated.", default: "4"),
                .value("requests", "N", help: "Batches the simulation sends.", default: "10000"),
                .value("seed", "N", help: "Seed of the simulated traffic.", default: "2026"),
                .value(
                    "history-days", "DAYS", help: "Days of history written to the batches topic first (0: none).",
                    default: "28"),
                .value("output", "DIR", help: "Where the store, the log and the report go.", default: "a new temp dir"),
                .value(
                    "fixtures", "DIR", help: "Where the resilience example fixture lives.",
                    default: "Tests/FlowmeterModelsTests/Fixtures"),
                .flag("exit", help: "End after the report instead of serving the console until interrupted."),
            ],
            run: { arguments in
                let duration =
                    try arguments.parsed("duration", as: "a positive duration such as 50s") {
                        OptionValues.duration($0).flatMap { $0 > .zero ? $0 : nil }
                    } ?? .seconds(50)
                let hours =
                    try arguments.parsed("simulated-hours", as: "a number of hours in (0, 48]") {
                        Double($0).flatMap { $0 > 0 && $0 <= 48 ? $0 : nil }
                    } ?? 4
                let requests =
                    try arguments.parsed("requests", as: "a positive number") {
                        Int($0).flatMap { $0 > 0 ? $0 : nil }
                    } ?? 10_000
                let seed = try arguments.parsed("seed", as: "a non-negative integer") { UInt64($0) } ?? 2026
                let historyDays =
                    try arguments.parsed("history-days", as: "a number of days in [0, 60]") {
                        Int($0).flatMap { $0 >= 0 && $0 <= 60 ? $0 : nil }
                    } ?? 28
                var directory = arguments.isSet("output") ? arguments.value("output") ?? "" : ""
                if directory.isEmpty {
                    directory = NSTemporaryDirectory() + "flowmeter-demo-\(getpid())"
                }
                return try await DemoRun(
                    duration: duration, simulatedHours: hours, requests: requests, seed: seed,
                    historyDays: historyDays, directory: directory, fixtures: arguments.value("fixtures") ?? "",
                    servesConsole: !arguments.flag("exit")
                ).run()
            }
        )
    }
}

/// One run of the demo.
struct DemoRun {
    let duration: Duration
    let simulatedHours: Double
    let requests: Int
    let seed: UInt64
    let historyDays: Int
    let directory: String
    let fixtures: String
    /// Whether the demo ends by serving the console over its store until interrupted.
    var servesConsole = false
    let ingestKey = "demo-ingest-key"
    let readKey = "demo-read-key"
    let adminKey = "demo-admin-key"

    func run() async throws -> Int32 {
        print(Terminal.styled("Flowmeter demo", .bold) + ": what did the backend send that the apps cannot render?\n")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let storePath = directory + "/flowmeter.sqlite"
        try? FileManager.default.removeItem(atPath: storePath)

        Terminal.heading("starting the collector, Kafka (in process) and the rollup sink")
        let logPath = directory + "/collector.log"
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let logHandle = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        let logger = Logger(threshold: .info, format: .json) { line in
            logHandle.write(Data((line + "\n").utf8))
        }
        var serveConfiguration = ServeConfiguration(collector: try configuration())
        serveConfiguration.storeURL = storePath
        serveConfiguration.sinkGroup = "flowmeter-demo-sink"
        serveConfiguration.deadLetterPath = directory + "/dead-letters.jsonl"
        serveConfiguration.detection.interval = .zero
        let serve = try makeServe(serveConfiguration, logger: logger)
        let collector = serve.collector
        let store = serve.store!
        let running = Task { try await serve.group.run() }
        // The group starts the HTTP server in its own task: wait (bounded) until it listens.
        for _ in 0..<500 where collector.port == 0 {
            try await Task.sleep(for: .milliseconds(10))
        }
        let baseURL = URL(string: "http://127.0.0.1:\(collector.port)")!
        print("    collector  \(baseURL.absoluteString)   kafka  \(collector.bootstrapServers.joined(separator: ","))")
        print("    store      \(storePath)")
        print("    log        \(logPath)\n")

        let extraBatches = try await showResilience(baseURL: baseURL)
        await uploadManifests(baseURL: baseURL)
        let end = Int64(Date().timeIntervalSince1970)
        if historyDays > 0 {
            await seedHistory(
                TrafficScenario(
                    seed: seed, end: end, simulatedSeconds: Int64(simulatedHours * 3600), batchCount: requests,
                    runID: 0),
                configuration: serveConfiguration.collector, bootstrapServers: collector.bootstrapServers, store: store)
        }

        Terminal.heading(
            "simulating \(hoursText) of 3 apps' traffic in ~\(duration.components.seconds) s, with backend deploys")
        print("    6,800 installs, shop 5.3.0 ramping up, 3% debug builds; page-api deploys 4 times (and twice before)")
        let outcome = await SimulationRun(
            target: baseURL, ingestKey: ingestKey, adminKey: adminKey, seed: seed, duration: duration,
            simulatedHours: simulatedHours, maxRequests: requests, concurrency: 8, showsProgress: true, end: end
        ).run()
        outcome.printSummary()
        print("")

        let taken = Int64(outcome.counters.accepted + extraBatches)
        let waited = await waitForRollups(store: store, batches: taken)
        // Every batch is in the store: stop the services (the sink last, after the collector's final drain).
        serve.group.triggerShutdown(reason: "demo traffic done")
        try await running.value
        if !waited {
            print("    " + Terminal.styled("not every batch reached the store in time; results may be short", .yellow))
        } else if let stored = await lastDayBatches(store), stored != taken {
            // The pipeline's promise: the store counts each batch taken once, however often it was sent.
            print(
                "    "
                    + Terminal.styled(
                        "the store holds \(stored) batches of the last day where \(taken) were taken", .yellow))
        }
        await describeStore(store)

        let since = "\(Int(simulatedHours.rounded(.up)) + 1)h"
        Terminal.heading("flowmeter ungated --since \(since)   (types sent to app versions that cannot render them)")
        _ = await query(["ungated", "--store", storePath, "--since", since])
        print("")
        Terminal.heading("flowmeter spikes --since \(since)   (diagnostics rising sharply, and the deploy behind them)")
        _ = await query(["spikes", "--store", storePath, "--since", since])
        print("")
        Terminal.heading("flowmeter gates   (version gates the backend needs, and when each can go)")
        _ = await query(["gates", "--store", storePath])
        print("")
        await checkDroppedKey(storePath: storePath, since: since, truth: outcome.truth)
        await showCompatibilityAndMatrix(store: store, storePath: storePath, since: since)

        let reportPath = directory + "/schema-health"
        Terminal.heading("the weekly schema-health report")
        await writeReport(storePath: storePath, to: reportPath)

        print("")
        let truth = outcome.truth
        print(Terminal.styled("What happened", .bold))
        print("    page-api \(truth.ungated[0].introducedBy.version) sent `hologram_projector` to every shop version;")
        print("    only 5.3.0 renders it. The fix: gate it at 5.3.0 (suggestedGate above).")
        if let regression = truth.regressions.first {
            print(
                "    It is a regression: page-api \(regression.earlierDeploy.version) had sent it two days before, for an"
            )
            print("    hour, until the next deploy rolled it back.")
        }
        print("    page-api \(truth.typos[0].introducedBy.version) misspelled `image_text_card` as `imgae_text_card`;")
        print("    page-api \(truth.malformed[0].introducedBy.version) dropped `imageURL` from it.")
        print("    Each cause is one incident in `spikes`, however many app versions it hit.")
        print("    Debug builds' `dev_playground_widget` and the gated `story_ring` are rightly not flagged.")
        if historyDays > 0 {
            print("    The \(historyDays) days of history seeded first give every gate a date; their background raises")
            print("    no incident.")
        }
        print("Explore: export FLOWMETER_STORE=\(storePath)")
        print(
            "         flowmeter top; flowmeter versions; flowmeter types; flowmeter deploys list; flowmeter manifests list"
        )
        if servesConsole { try await serveConsole(storePath: storePath, logger: logger) }
        return 0
    }

    /// Serves the read API and the console over the demo's store (no Kafka: nothing more is ingested) until SIGINT
    /// or SIGTERM, after printing the console's URL and the read key.
    private func serveConsole(storePath: String, logger: Logger) async throws {
        var collector = try configuration()
        collector.kafka = .none
        collector.spool = nil
        collector.additionalRoutes = ReadRoutes.routes(
            keys: collector.keys, storeURL: storePath, ownersPath: nil, owners: nil)
        var configuration = ServeConfiguration(collector: collector)
        configuration.storeURL = storePath
        configuration.deadLetterPath = nil
        configuration.detection.interval = .zero
        configuration.pruneInterval = .zero
        let console = try makeServe(configuration, logger: logger)
        let running = Task { try await console.group.run() }
        for _ in 0..<500 where console.collector.port == 0 {
            try await Task.sleep(for: .milliseconds(10))
        }
        print("")
        Terminal.heading("the console")
        print("    open   http://127.0.0.1:\(console.collector.port)/console/")
        print("    key    \(readKey)   (a read key: it reads every app and writes nothing)")
        print("    the read API answers the same key: curl -H 'Authorization: Bearer \(readKey)' \\")
        print("        'http://127.0.0.1:\(console.collector.port)/v1/query/spikes?since=7d'")
        print("    Serving until interrupted (Ctrl-C); `flowmeter demo --exit` ends without serving.")
        fflush(nil)
        try await running.value
    }

    private var hoursText: String {
        simulatedHours == simulatedHours.rounded() ? "\(Int(simulatedHours)) hours" : "\(simulatedHours) hours"
    }

    private func configuration() throws -> CollectorConfiguration {
        var configuration = CollectorConfiguration(
            keys: try IngestKeys(
                json: Data(
                    """
                    {"ingestKeys": [{"key": "\(ingestKey)", "apps": ["*"],
                      "rateLimit": {"eventsPerSecond": 1000000, "burst": 1000000}}],
                     "readKeys": [{"key": "\(readKey)", "apps": ["*"]}],
                     "adminKeys": ["\(adminKey)"]}
                    """.utf8)))
        configuration.port = 0
        configuration.kafka = .embedded
        configuration.salt = Array("demo-salt-not-for-production".utf8)
        configuration.collectorID = "demo"
        // As `serve` does by default: what Kafka cannot take in time goes to a disk spool, here in the demo's folder.
        configuration.spool = CollectorConfiguration.DiskSpool(directory: directory + "/spool")
        return configuration
    }

    /// The old demo's best bits, short: the resilience example and a batch with broken events still count.
    ///
    /// These bodies are broken on purpose, which `FlowmeterReporter.record` cannot produce, so they go out as they
    /// are through the SDK's transport; the simulation after them records through the SDK proper.
    private func showResilience(baseURL: URL) async throws -> Int {
        var taken = 0
        let transport = URLSessionTransport(timeout: 10)
        func post(_ body: [UInt8]) async throws -> DemoAnswer {
            let response = try await transport.send(
                UploadRequest(
                    url: baseURL.appendingPathComponent("v1/diagnostics"),
                    headers: [("Authorization", "Bearer \(ingestKey)"), ("Content-Type", "application/json")],
                    body: body))
            guard response.status == 202,
                let answer = try? JSONDecoder().decode(DemoAnswer.self, from: Data(response.body))
            else {
                throw CommandError(
                    .unreadableInput,
                    "the collector answered \(response.status): \(String(decoding: response.body, as: UTF8.self))")
            }
            return answer
        }
        Terminal.heading("lossy decoding: one bad event never fails the batch")
        if let body = FileManager.default.contents(atPath: fixtures + "/resilience-example.json") {
            let answer = try await post(Array(body))
            taken += 1
            print("    the Flow-UI resilience example (a page with an unknown type, a malformed payload and a widget")
            print("    without a type): 202, accepted \(answer.accepted), dropped \(answer.dropped)")
        }
        let now = Timestamp(Date()).rfc3339String
        let broken = Array(
            """
            {"client": {"appID": "com.example.shop", "appVersion": "5.3.0", "platform": "ios", "buildConfiguration": "debug"},
             "events": [
               {"kind": "unknownType", "widgetType": "dev_playground_widget", "occurredAt": "\(now)"},
               {"widgetType": "promo_banner", "occurredAt": "\(now)"},
               {"kind": "malformedPayload", "widgetType": "video_tile", "occurredAt": "yesterday"}
             ]}
            """.utf8)
        let partial = try await post(broken)
        print("    a batch with two broken events: 202, accepted \(partial.accepted), dropped \(partial.dropped)")
        for diagnostic in partial.diagnostics {
            print("      " + Terminal.styled(diagnostic.description, .yellow))
        }
        print("")
        return taken + 1
    }

    /// Waits until the store holds every accepted batch (`batches` batches of the last day), so the queries see the
    /// whole run, for as long as the sink makes progress: up to 30 s without a new batch stored (a loaded machine's
    /// sink may take longer than that in all, and results from a store still short would lack the end of the
    /// simulated hours). False when it stopped moving first.
    private func waitForRollups(store: any RollupStore, batches: Int64) async -> Bool {
        var deadline = ContinuousClock.now + .seconds(30)
        var last: Int64 = -1
        while ContinuousClock.now < deadline {
            let stored = await lastDayBatches(store) ?? 0
            if stored >= batches { return true }
            if stored > last {
                last = stored
                deadline = ContinuousClock.now + .seconds(30)
            }
            try? await Task.sleep(for: .milliseconds(500))
        }
        return false
    }

    /// The batches the store holds received in the last day (the simulated hours' and the resilience examples'; the
    /// seeded history ends more than a day before), nil when it cannot be read.
    private func lastDayBatches(_ store: any RollupStore) async -> Int64? {
        await onThread(named: "demo-store-read") { () -> Int64? in
            let now = Int64(Date().timeIntervalSince1970)
            let rollups = try? store.versionRollups(
                from: Timestamp(secondsSinceEpoch: now - 86_400), to: Timestamp(secondsSinceEpoch: now + 3_600),
                appID: nil)
            return rollups?.reduce(0) { $0 + $1.batches }
        }
    }

    /// Says what the sink merged into the store: the rollups the queries below read.
    private func describeStore(_ store: any RollupStore) async {
        typealias Summary = (series: Int, minutes: Int, events: Int64, batches: Int64)
        let summary = await onThread(named: "demo-store-read") { () -> Summary? in
            let now = Int64(Date().timeIntervalSince1970)
            // The seeded history too, when there is one.
            let from = Timestamp(secondsSinceEpoch: now - Int64(historyDays + 2) * 86_400)
            let to = Timestamp(secondsSinceEpoch: now + 3_600)
            guard let series = try? store.seriesRollups(SeriesQuery(from: from, to: to)),
                let versions = try? store.versionRollups(from: from, to: to, appID: nil)
            else { return nil }
            return (
                Set(series.map(\.series)).count, series.count, series.reduce(0) { $0 + $1.events },
                versions.reduce(0) { $0 + $1.batches }
            )
        }
        guard let summary else { return }
        Terminal.heading("rollups in the store (built by the sink from flowmeter.batches.v1)")
        print(
            "    \(CellFormat.count(Int64(summary.minutes))) series-minutes of \(CellFormat.count(Int64(summary.series))) "
                + "series: \(CellFormat.count(summary.events)) occurrences (events × count) from "
                + "\(CellFormat.count(summary.batches)) batches\n")
    }

    /// Runs a query command in this process, exactly as `flowmeter ARGUMENTS` would.
    func query(_ arguments: [String]) async -> Int32 {
        // The commands write to the file handle directly; what print() buffered must come out first.
        fflush(nil)
        defer { fflush(nil) }
        return await CommandRunner(root: FlowmeterCommands.root, version: FlowmeterCommands.version).run(
            arguments, environment: ["COLUMNS": "80"])
    }

    /// Writes this week's report (where the simulated hours are) as HTML and Markdown with `flowmeter report`.
    private func writeReport(storePath: String, to base: String) async {
        guard FlowmeterCommands.root.subcommand(named: "report") != nil else {
            print("    (the report command is not built yet)")
            return
        }
        var calendar = Calendar(identifier: .iso8601)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.yearForWeekOfYear, .weekOfYear], from: Date())
        let week = String(format: "%04d-W%02d", parts.yearForWeekOfYear ?? 0, parts.weekOfYear ?? 0)
        for format in ["html", "md"] {
            let status = await query([
                "report", "--store", storePath, "--week", week, "--format", format, "--output", "\(base).\(format)",
            ])
            if status != 0 && status != 3 {
                print("    " + Terminal.styled("the \(format) report failed (exit \(status))", .yellow))
            }
        }
        print("    open \(base).html in a browser; paste \(base).md into an issue or a chat")
    }
}

/// The collector's 202 body, as far as the demo prints it.
private struct DemoAnswer: Decodable {
    var accepted: Int
    var dropped: Int
    var diagnostics: [DecodeDiagnostic]
}
